import { Elysia } from 'elysia';
import type { AppDeps } from '../deps';
import { authenticate } from '../auth/authenticate';
import { AppError, notFound, unauthorized } from '../http/errors';
import { pageRoute } from '../http/register';
import { readableFile } from './file.routes';
import { findBlob } from './file.store';

/** The GET routes of file contents, for the 405 of another method (src/app.ts). */
export const FILE_CONTENT_PATH = /^\/api\/files\/[^/]+\/(content|thumbnail)$/;

/**
 * A file's bytes, and an image's thumbnail: GET, so that an `<img>` of the web app (with its
 * session cookie) and any HTTP client (with its API key or bearer token) can fetch them, with
 * `Range` for resuming and seeking, and an ETag for caching (docs/files.md, "Download").
 */
export function fileContentRoutes(deps: AppDeps) {
  type Ctx = { request: Request; params: { id: string } };
  const route = (what: 'content' | 'thumbnail') => async (ctx: Ctx) => {
    const res = await pageRoute<Ctx>(deps, ({ request, params }) => serveFile(deps, request, params.id, what))(ctx);
    // After the stamp, which sets the API's own policy (it lets the docs page run its script):
    // a file is never run as a page of this origin, whatever it holds (an HTML upload's scripts).
    res.headers.set('content-security-policy', "default-src 'none'; sandbox");
    return res;
  };
  return new Elysia({ name: 'file-content' }).get('/api/files/:id/content', route('content')).get('/api/files/:id/thumbnail', route('thumbnail'));
}

async function serveFile(deps: AppDeps, request: Request, id: string, what: 'content' | 'thumbnail'): Promise<Response> {
  const auth = await authenticate(deps.store, request.headers, deps.config.sessionTtlDays, deps.now());
  if (!auth) throw unauthorized();
  const file = await readableFile(deps, id, auth.principal.user.id);
  const sha = what === 'content' ? file.sha256 : file.thumbSha256;
  if (!sha) throw notFound();
  const stored = await deps.store.read((tx) => findBlob(tx, sha));
  if (!stored) throw notFound();
  const blob = deps.files.get(stored.key);
  const size = stored.size;
  const etag = `"${sha}"`;
  const headers: Record<string, string> = {
    'content-type': what === 'content' ? file.mimeType : 'image/webp',
    etag,
    'accept-ranges': 'bytes',
    // Private: behind a credential. Revalidated: access can end (a writer removed).
    'cache-control': 'private, no-cache',
    'content-disposition': `${file.kind === 'image' || file.mimeType.startsWith('video/') ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(what === 'content' ? file.filename : `${file.filename}.webp`)}`,
  };
  if (request.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers });
  const range = parseRange(request.headers.get('range'), size);
  if (range === 'unsatisfiable') throw new AppError('RANGE_NOT_SATISFIABLE', { message: `The file has ${size} bytes.`, headers: { 'content-range': `bytes */${size}` } });
  if (!range) return new Response(blob.stream(), { headers: { ...headers, 'content-length': String(size) } });
  const [start, end] = range;
  return new Response(blob.slice(start, end + 1).stream(), {
    status: 206,
    headers: { ...headers, 'content-length': String(end - start + 1), 'content-range': `bytes ${start}-${end}/${size}` },
  });
}

/**
 * One range of `bytes=a-b`, `bytes=a-` or `bytes=-n` (RFC 9110 §14.1.2), inclusive. Several
 * ranges, another unit or a malformed header are ignored (the whole file is sent, as the RFC
 * allows); a range wholly past the end is unsatisfiable.
 */
export function parseRange(header: string | null, size: number): [number, number] | 'unsatisfiable' | undefined {
  const m = header?.match(/^bytes=(\d*)-(\d*)$/);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return undefined;
  return [start, end];
}

const contentPath = (what: 'content' | 'thumbnail', summary: string, description: string) => ({
  get: {
    operationId: `files.${what}`,
    tags: ['files'],
    summary,
    description,
    security: [{ session: [] }, { bearer: [] }, { apiKey: [] }],
    parameters: [
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'Range', in: 'header', required: false, schema: { type: 'string' }, description: 'One range, `bytes=a-b`, `bytes=a-` or `bytes=-n`' },
      { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
    ],
    responses: {
      200: { description: 'The bytes', content: { 'application/octet-stream': {} } },
      206: { description: 'The range asked for (`Content-Range`)' },
      304: { description: 'Not modified (the ETag matched)' },
      401: { description: 'No valid credential', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
      404: { description: 'Unknown, or not yours to read', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
      416: { description: 'The range starts past the end', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
    },
  },
});

export const fileContentOpenApiPaths = {
  '/api/files/{id}/content': contentPath(
    'content',
    "A file's bytes",
    'With the caller\'s credential (API key, bearer token or the session cookie). Images and generated videos are served inline, documents as attachments; every file with a sandboxing Content-Security-Policy.',
  ),
  '/api/files/{id}/thumbnail': contentPath('thumbnail', "An image's thumbnail (WebP, at most 256 pixels a side)", 'Only images have one (else 404).'),
};
