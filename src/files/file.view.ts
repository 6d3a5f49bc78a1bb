import { t } from 'elysia';
import type { FileRow } from '../db/schema';
import { iso } from '../ids';

/** Where a file's bytes are served (src/files/file-content.routes.ts), with the caller's credential. */
export const contentUrl = (id: string) => `/api/files/${id}/content`;
export const thumbnailUrl = (id: string) => `/api/files/${id}/thumbnail`;

export const FileSchema = t.Object({
  id: t.String(),
  filename: t.String(),
  mimeType: t.String(),
  kind: t.Union([t.Literal('image'), t.Literal('document')]),
  size: t.Number(),
  width: t.Union([t.Number(), t.Null()]),
  height: t.Union([t.Number(), t.Null()]),
  source: t.Union([t.Literal('upload'), t.Literal('generated')]),
  textStatus: t.Union([t.Literal('none'), t.Literal('pending'), t.Literal('ready'), t.Literal('failed')]),
  textError: t.Union([t.String(), t.Null()]),
  contentUrl: t.String(),
  thumbnailUrl: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: 'date-time' }),
});

export const fileView = (f: FileRow) => ({
  id: f.id,
  filename: f.filename,
  mimeType: f.mimeType,
  kind: f.kind,
  size: f.size,
  width: f.width,
  height: f.height,
  source: f.source,
  textStatus: f.textStatus,
  textError: f.textError,
  contentUrl: contentUrl(f.id),
  thumbnailUrl: f.thumbSha256 ? thumbnailUrl(f.id) : null,
  createdAt: iso(f.createdAt),
});
