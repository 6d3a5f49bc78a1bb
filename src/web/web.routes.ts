import { Elysia } from 'elysia';
import type { AppDeps } from '../deps';
import { AppError } from '../http/errors';
import { pageRoute } from '../http/register';
import { loadWebFiles, type ServedFile } from './web-files';

/**
 * The pages' policy: the app's own script, styles and API only. No inline script or style
 * attribute can run (Markdown answers are rendered into the page: whatever slipped through would
 * still be inert), no other origin is contacted, and no one may frame the app. It replaces the
 * API's policy, which allows the docs page's inline script.
 */
export const WEB_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // blob: for the pictures and recordings the page makes itself (previews, speech being played).
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The app's pages (web/src/router.ts): `/`, the fixed pages, and one place per conversation,
 * research run, group chat and invite link. src/app.ts answers their other methods with a 405.
 */
export const WEB_PAGES = ['/', '/sessions', '/research', '/groups', '/settings', '/admin', '/setup', '/files', '/memories', '/assistants', '/news', '/support', '/apps', '/whats-new', '/oauth/authorize'] as const;
export const WEB_PLACES = ['/c/:id', '/research/:id', '/g/:id', '/join/:id', '/support/:id'] as const;
/** Files at fixed paths beside the hashed assets: a service worker's scope is its own folder, so it lives at the root. */
export const WEB_FILES = ['/sw.js', '/manifest.webmanifest'] as const;
/** Any path the app serves its page at, or one of its files: made from the lists, so it cannot drift from them. */
export const WEB_PATH = new RegExp(
  `^(?:${[...WEB_PAGES, ...WEB_PLACES, ...WEB_FILES, '/assets/:id', '/icons/:id'].map((p) => p.replace('.', '\\.').replace(/:id$/, '[^/]+')).join('|')})$`,
);

/** The app's paths: the page itself at each of its places, and the hashed assets. */
export function webRoutes(deps: AppDeps) {
  // Loaded on the first request, once per app: a server that never serves a page never bundles.
  let files: Promise<Map<string, ServedFile>> | undefined;
  const filesOnce = () => (files ??= loadWebFiles(deps.log).catch((err) => {
    files = undefined; // a failed development bundle is tried again on the next request
    throw err;
  }));

  const answer = (path: string) =>
    pageRoute<{ request: Request; params: Record<string, string> }>(deps, async ({ request, params }) => {
      const file = (await filesOnce()).get(path.endsWith('/') ? `${path}${params.file}` : path);
      if (!file) throw new AppError('NOT_FOUND');
      return respond(request, file);
    });
  const withPolicy = (handler: ReturnType<typeof answer>) => async (ctx: { request: Request; params: Record<string, string> }) => {
    const res = await handler(ctx);
    if (res.status < 400) res.headers.set('content-security-policy', WEB_CSP);
    return res;
  };
  const page = withPolicy(answer('/index.html'));
  const app = new Elysia({ name: 'web' });
  for (const path of [...WEB_PAGES, ...WEB_PLACES]) app.get(path, page);
  for (const path of WEB_FILES) app.get(path, withPolicy(answer(path)));
  return app.get('/assets/:file', withPolicy(answer('/assets/'))).get('/icons/:file', withPolicy(answer('/icons/')));
}

function respond(request: Request, file: ServedFile): Response {
  const headers = new Headers({ 'content-type': file.type, 'cache-control': file.cacheControl, etag: file.etag, vary: 'accept-encoding' });
  if (request.headers.get('if-none-match') === file.etag) return new Response(null, { status: 304, headers });
  const gzip = file.gzip && /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '');
  if (gzip) headers.set('content-encoding', 'gzip');
  return new Response(gzip ? file.gzip : file.body, { headers });
}
