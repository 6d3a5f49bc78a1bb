import { Elysia } from 'elysia';
import type { AppDeps } from './deps';
import { AppError, errorResponse } from './http/errors';
import { registerOperations, renderError, type RequestMeta } from './http/register';
import type { AnyOperation } from './http/operation';
import { buildOpenApi } from './http/openapi';
import { docsPage } from './http/docs-page';
import { securityHeaders } from './http/security-headers';
import { accountOperations } from './account/account.routes';
import { authOperations } from './auth/auth.routes';
import { chatOperations } from './chat/chat.routes';
import { streamOperations } from './chat/stream.routes';
import { sessionOperations } from './auth/sessions.routes';
import { oauthOpenApiPaths, oauthOperations, oauthRoutes } from './auth/oauth.routes';
import { widgetOperations } from './widgets/widget.routes';
import { bookmarkOperations } from './bookmarks/bookmark.routes';
import { creditOperations } from './credits/credit.routes';
import { imageOperations } from './images/image.routes';
import { notificationOperations } from './notifications/notification.routes';
import { groupOperations } from './groups/group.routes';

/** The whole API, one group per domain. */
export const operations: readonly AnyOperation[] = [
  ...authOperations,
  ...sessionOperations,
  ...oauthOperations,
  ...accountOperations,
  ...widgetOperations,
  ...bookmarkOperations,
  ...creditOperations,
  ...imageOperations,
  ...notificationOperations,
  ...chatOperations,
  ...streamOperations,
  ...groupOperations,
];

/** `ops` defaults to the route table; tests may mount extra operations (e.g. a test-only stream). */
export function createApp(deps: AppDeps, ops: readonly AnyOperation[] = operations) {
  const meta = new WeakMap<Request, RequestMeta>();
  const operationPaths = new Set(ops.map((op) => `/api/${op.path}`));
  // Built on first request: together they take tens of milliseconds that a cold start need not pay.
  let openapi: string | undefined;
  let docs: string | undefined;
  const openapiJson = () => {
    if (openapi === undefined) {
      const spec = buildOpenApi(ops);
      Object.assign(spec.paths, oauthOpenApiPaths);
      openapi = JSON.stringify(spec);
    }
    return openapi;
  };

  const app = new Elysia()
    .onRequest(({ request, set }) => {
      const id = crypto.randomUUID();
      meta.set(request, { id, start: performance.now() });
      Object.assign(set.headers, securityHeaders, { 'x-request-id': id });
      // Returning a value here would short-circuit the request.
      return undefined;
    })
    .onAfterResponse(({ request, set, responseValue }) => {
      const m = meta.get(request);
      const status = responseValue instanceof Response ? responseValue.status : Number(set.status ?? 200);
      deps.log.info('request', {
        method: request.method,
        path: new URL(request.url).pathname,
        status,
        ms: m ? Math.round((performance.now() - m.start) * 10) / 10 : undefined,
        requestId: m?.id,
      });
    })
    .onError(({ code, error, request, set }) => {
      const requestId = meta.get(request)?.id ?? '';
      const path = new URL(request.url).pathname;
      let res: Response;
      if (code === 'NOT_FOUND') {
        // A known operation reached with the wrong method is 405, anything else 404.
        const known = operationPaths.has(path) || path === '/api/health';
        res = errorResponse(new AppError(known ? 'METHOD_NOT_SUPPORTED' : 'NOT_FOUND'));
      } else {
        res = renderError(error, deps, requestId, path);
      }
      set.status = res.status;
      return res;
    })
    .get('/api/health', () => ({ status: 'ok' }))
    .get('/api/openapi.json', () => new Response(openapiJson(), { headers: { 'content-type': 'application/json' } }))
    .get('/api/docs', () => new Response((docs ??= docsPage(ops)), { headers: { 'content-type': 'text/html; charset=utf-8' } }))
    .use(oauthRoutes(deps));

  registerOperations(app as unknown as Elysia, ops, deps, meta);
  return app;
}

export type App = ReturnType<typeof createApp>;
