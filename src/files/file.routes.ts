import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { forbidden, notFound } from '../http/errors';
import type { AppDeps } from '../deps';
import type { FileRow } from '../db/schema';
import { addFile, checkRoomForOneMore } from './add-file';
import { FRAMING_BYTES, receiveUpload, tempName } from './receive-upload';
import { canReadFile, deleteFile, findFileById, listFilesOfUser } from './file.store';
import { FileSchema, fileView } from './file.view';
import { sweepBlobsSoon } from './sweep-blobs';
import { ACCEPTED } from './sniff-file';
import { searchDocuments } from './embeddings-search';
import { apiKeyOf } from '../usage/meter-calls';

/**
 * A file the caller may read: unknown and not readable are the same 404, so ids of other users'
 * files reveal nothing (docs/files.md, "Access").
 */
export async function readableFile(deps: AppDeps, id: string, userId: string): Promise<FileRow> {
  const file = await deps.store.read(function* (tx) {
    const f = yield* findFileById(tx, id);
    return f && (yield* canReadFile(tx, f, userId)) ? f : undefined;
  });
  if (!file) throw notFound();
  return file;
}

/** Characters of a chunk shown as a search hit's excerpt. */
const EXCERPT_CHARS = 500;

const SearchModeSchema = t.Union([t.Literal('text'), t.Literal('semantic'), t.Literal('hybrid')]);

export const fileOperations = [
  defineOperation({
    path: 'files/upload',
    summary: 'Upload an image or a document',
    description:
      `multipart/form-data with the file in a part named \`file\` (its name is kept; its declared type is ignored). Parley takes ${ACCEPTED}, decided from the bytes; anything else is 415. ` +
      'Images are re-encoded without their metadata (EXIF, GPS) and get a thumbnail; documents are turned into searchable text after the answer (`textStatus` pending → ready or failed). ' +
      'Over `PARLEY_FILES_MAX_BYTES`: 413. Over the per-user count or bytes quota: 409 with `data.reason` `quota`. The same bytes are stored once.',
    input: t.Object({}),
    output: FileSchema,
    upload: true,
    maxBodyBytes: (config) => config.filesMaxBytes + FRAMING_BYTES,
    rateLimit: 'write',
    errors: [409],
    handler: async ({ user, deps, request }) => {
      await checkRoomForOneMore(deps, user.id);
      const received = await receiveUpload(request, deps.config.filesMaxBytes, await deps.files.tempPath(tempName()));
      const file = await addFile(deps, user.id, received);
      if (file.textStatus === 'pending') deps.fileText.wake();
      return fileView(file);
    },
  }),
  defineOperation({
    path: 'files/listFiles',
    summary: "The caller's files, newest first",
    description: '`before`: the last id of the page before (from `nextBefore`); `kind` keeps images or documents only. Files attached to someone else\'s conversation are theirs, not listed here.',
    input: t.Object({
      kind: t.Optional(t.Union([t.Literal('image'), t.Literal('document')])),
      limit: t.Optional(t.Integer({ minimum: 1, maximum: 200 })),
      before: t.Optional(t.String()),
    }),
    output: t.Object({ files: t.Array(FileSchema), nextBefore: t.Union([t.String(), t.Null()]) }),
    handler: async ({ input, user, deps }) => {
      const limit = input.limit ?? 50;
      const rows = await deps.store.read(function* (tx) {
        const before = input.before ? yield* findFileById(tx, input.before) : undefined;
        return yield* listFilesOfUser(tx, user.id, { kind: input.kind, limit: limit + 1, before: before?.userId === user.id ? before : undefined });
      });
      const page = rows.slice(0, limit);
      return { files: page.map(fileView), nextBefore: rows.length > limit ? page.at(-1)!.id : null };
    },
  }),
  defineOperation({
    path: 'files/getFile',
    summary: "A file's metadata",
    description: 'The owner, and the owner and writers of a conversation the file is attached to, may read it; anyone else: 404.',
    input: t.Object({ fileId: t.String() }),
    output: FileSchema,
    errors: [404],
    handler: async ({ input, user, deps }) => fileView(await readableFile(deps, input.fileId, user.id)),
  }),
  defineOperation({
    path: 'files/searchFiles',
    summary: "Search the text of the caller's documents",
    description:
      'Search the chunks of the caller\'s documents whose text is ready, best first. Each hit is a chunk of about 2,000 characters: its file, its page (PDF) and an excerpt of up to 500 characters. ' +
      '`mode`: `text` (full-text: any of the query\'s words), `semantic` (by meaning, through the embeddings server: 503 when none is set up, 502 when it fails) or `hybrid` (both, fused by reciprocal rank). ' +
      'The default is `hybrid` when the server has embeddings set up (`PARLEY_EMBEDDINGS_BASE_URL`), else `text`; a hybrid search whose query cannot be embedded answers by words alone. `mode` in the answer says which was done.',
    input: t.Object({
      query: t.String({ minLength: 1, maxLength: 500 }),
      limit: t.Optional(t.Integer({ minimum: 1, maximum: 50 })),
      mode: t.Optional(SearchModeSchema),
    }),
    output: t.Object({
      mode: SearchModeSchema,
      hits: t.Array(t.Object({ fileId: t.String(), filename: t.String(), page: t.Union([t.Number(), t.Null()]), excerpt: t.String() })),
    }),
    errors: [502, 503],
    handler: async ({ input, user, principal, deps }) => {
      const found = await searchDocuments(deps, { userId: user.id, query: input.query, limit: input.limit ?? 10, mode: input.mode, apiKeyId: apiKeyOf(principal) });
      return { mode: found.mode, hits: found.hits.map((h) => ({ fileId: h.fileId, filename: h.filename, page: h.page, excerpt: h.content.slice(0, EXCERPT_CHARS) })) };
    },
  }),
  defineOperation({
    path: 'files/deleteFile',
    summary: 'Delete one of your files',
    description:
      'Only the owner may delete a file (a writer of a conversation it is attached to: 403; unknown: 404). It leaves the conversations it was attached to; its bytes are removed once no other file has the same.',
    input: t.Object({ fileId: t.String() }),
    output: t.Object({ success: t.Literal(true) }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const file = await readableFile(deps, input.fileId, user.id);
      if (file.userId !== user.id) throw forbidden();
      await deps.store.write((tx) => deleteFile(tx, file.id));
      sweepBlobsSoon(deps);
      return { success: true as const };
    },
  }),
];
