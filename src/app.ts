import { Elysia } from 'elysia';
import type { AppDeps } from './deps';
import { AppError, errorResponse } from './http/errors';
import { pageRoute, registerOperations, renderError } from './http/register';
import { logRequest, pathOf, startRequest, stampResponse } from './http/request-stamp';
import type { AnyOperation } from './http/operation';
import { buildOpenApi } from './http/openapi';
import { docsPage } from './http/docs-page';
import { accountOperations } from './account/account.routes';
import { authOperations } from './auth/auth.routes';
import { chatOperations } from './chat/chat.routes';
import { shareOperations } from './chat/share.routes';
import { streamOperations } from './chat/stream.routes';
import { modelOperations } from './chat/models.routes';
import { sessionOperations } from './auth/sessions.routes';
import { oauthOpenApiPaths, oauthOperations, oauthRoutes } from './auth/oauth.routes';
import { widgetOperations } from './widgets/widget.routes';
import { bookmarkOperations } from './bookmarks/bookmark.routes';
import { feedbackOperations } from './feedback/feedback.routes';
import { memoryOperations } from './memory/memory.routes';
import { usageOperations } from './usage/usage.routes';
import { quotaOperations } from './usage/quota.routes';
import { creditOperations } from './credits/credit.routes';
import { imageOperations } from './images/image.routes';
import { voiceOperations } from './voice/voice.routes';
import { notificationOperations } from './notifications/notification.routes';
import { groupOperations } from './groups/group.routes';
import { supportOperations } from './support/support.routes';
import { adminOperations } from './admin/admin.routes';
import { connectionOperations } from './connections/connections.routes';
import { setupOperations } from './setup/setup.routes';
import { discoverOperations } from './setup/discover.routes';
import { adminServiceOperations } from './admin/admin-service.routes';
import { releaseNotesOperations } from './release-notes/release-notes.routes';
import { newsOperations } from './news/news.routes';
import { miniAppOperations } from './miniapps/miniapp.routes';
import { WEB_PATH, webRoutes } from './web/web.routes';
import { LOGIN_LINK_PATH, loginLinkOpenApiPaths, loginLinkRoutes } from './auth/login-link.routes';
import { fileOperations } from './files/file.routes';
import { serverInfoOperations } from './server-info/server-info.routes';
import { toolOperations } from './tools/tools.routes';
import { assistantOperations } from './assistants/assistants.routes';
import { AVATAR_PATH, assistantAvatarOpenApiPaths, assistantAvatarOperations, assistantAvatarRoutes } from './assistants/avatar.routes';
import { FILE_CONTENT_PATH, fileContentOpenApiPaths, fileContentRoutes } from './files/file-content.routes';
import { V1_PATHS, V1_PATTERNS, v1Routes } from './openai-compat/v1.routes';
import { createLimits } from './http/shared-limits';
import { openAiErrorOf, openAiErrorResponse } from './http/errors';
import { mcpOperations } from './mcp/mcp.routes';
import { MCP_CALLBACK_PATH, MCP_CLIENT_METADATA_PATH, mcpOAuthOpenApiPaths, mcpOAuthRoutes } from './mcp/mcp-oauth.routes';
import { MCP_METHODS, MCP_PATH, mcpRoutes } from './mcp-server/mcp.routes';
import { OAUTH_ROUTES, oauthRoutes as mcpServerOAuthRoutes } from './mcp-server/oauth/oauth.routes';
import { oauthConsentOperations } from './mcp-server/oauth/oauth-consent.routes';
import { mcpOpenApiPaths } from './mcp-server/mcp-openapi';

/** The whole API, one group per domain. */
export const operations: readonly AnyOperation[] = [
  ...authOperations,
  ...sessionOperations,
  ...oauthOperations,
  ...accountOperations,
  ...widgetOperations,
  ...bookmarkOperations,
  ...feedbackOperations,
  ...memoryOperations,
  ...creditOperations,
  ...usageOperations,
  ...quotaOperations,
  ...imageOperations,
  ...fileOperations,
  ...voiceOperations,
  ...notificationOperations,
  ...chatOperations,
  ...shareOperations,
  ...streamOperations,
  ...toolOperations,
  ...assistantOperations,
  ...assistantAvatarOperations,
  ...modelOperations,
  ...groupOperations,
  ...supportOperations,
  ...adminOperations,
  ...connectionOperations,
  ...setupOperations,
  ...discoverOperations,
  ...adminServiceOperations,
  ...releaseNotesOperations,
  ...newsOperations,
  ...miniAppOperations,
  ...serverInfoOperations,
  ...mcpOperations,
  ...oauthConsentOperations,
];

/** The sign-in flow's browser routes (src/auth/oauth.routes.ts): `/api/auth/oauth/:provider[/callback]`. */
const OAUTH_PAGE = /^\/api\/auth\/oauth\/[^/]+(\/callback)?$/;
/** The methods of the GET routes (pages): Elysia answers a HEAD with the GET route's headers. */
const PAGE_METHODS = 'GET, HEAD';

/** `ops` defaults to the route table; tests may mount extra operations (e.g. a test-only stream). */
export function createApp(deps: AppDeps, ops: readonly AnyOperation[] = operations) {
  // Every path a route answers and its methods, for the 405 (with `Allow`) of a known path
  // reached with another method. Elysia answers HEAD wherever it answers GET.
  const allowed = new Map<string, string>([
    ...ops.map((op) => [`/api/${op.path}`, 'POST'] as const),
    ...['/api/health', '/api/openapi.json', '/api/docs'].map((page) => [page, PAGE_METHODS] as const),
    [LOGIN_LINK_PATH, `${PAGE_METHODS}, POST`],
    ...Object.entries(V1_PATHS),
    [MCP_CALLBACK_PATH, PAGE_METHODS],
    [MCP_CLIENT_METADATA_PATH, PAGE_METHODS],
    [MCP_PATH, MCP_METHODS],
    ...Object.entries(OAUTH_ROUTES),
  ]);
  const allowOf = (path: string) =>
    allowed.get(path) ??
    V1_PATTERNS.find(([pattern]) => pattern.test(path))?.[1] ??
    (OAUTH_PAGE.test(path) || FILE_CONTENT_PATH.test(path) || AVATAR_PATH.test(path) || (deps.config.web && WEB_PATH.test(path)) ? PAGE_METHODS : undefined);
  // One set of per-user limits for the operations, the /v1 door and /mcp (src/http/shared-limits.ts).
  const limits = createLimits(deps);
  // Built on first request: together they take tens of milliseconds that a cold start need not pay.
  let openapi: string | undefined;
  let docs: string | undefined;
  const openapiJson = () => {
    if (openapi === undefined) {
      openapi = JSON.stringify(buildOpenApi(ops, { ...oauthOpenApiPaths, ...loginLinkOpenApiPaths, ...fileContentOpenApiPaths, ...assistantAvatarOpenApiPaths, ...mcpOAuthOpenApiPaths, ...mcpOpenApiPaths }, undefined, deps.config));
    }
    return openapi;
  };
  // Routes stamp and log their own answers (src/http/request-stamp.ts); no per-request hooks.
  const page = <C extends { request: Request }>(fn: (ctx: C) => Response | Promise<Response>) => pageRoute(deps, fn);
  const reply = (body: string, type = 'application/json') => new Response(body, { headers: { 'content-type': type } });

  // Elysia finds a request's path by searching for its first "/" from a fixed offset: 11 by
  // default (it assumes a host of at least four characters, "http://a.bc/"), which routes
  // `Host: pi` by the wrong part of the path (405 everywhere, and `/x/api/...` served as
  // `/api/...`). Parley serves plain HTTP (TLS ends at the proxy), so every URL starts with
  // "http://" and 7 is exact for hosts of any length. `aot` is pinned because Elysia's other
  // handler (`aot: false`, or ELYSIA_AOT=false in the environment) ignores this option.
  const app = new Elysia({ aot: true, handler: { standardHostname: false } })
    // Only what no route answered reaches here: unknown paths, wrong methods.
    .onError(({ code, error, request, set }) => {
      const stamp = startRequest();
      const path = pathOf(request.url);
      let res: Response;
      if (code === 'NOT_FOUND') {
        // A known path reached with the wrong method is 405 and says which methods it takes
        // (RFC 9110 §15.5.6); anything else is 404.
        const allow = allowOf(path);
        const err = allow ? new AppError('METHOD_NOT_SUPPORTED', { headers: { allow } }) : new AppError('NOT_FOUND');
        // The /v1 door answers in OpenAI's shape, saying which path and method it does not have.
        if (path === '/v1' || path.startsWith('/v1/')) res = openAiErrorResponse(openAiErrorOf(new AppError(err.code, { headers: err.headers, message: `Invalid URL (${request.method} ${path}).` })));
        else res = errorResponse(err);
      } else {
        res = renderError(error, deps, stamp.id, path);
      }
      stampResponse(res, stamp);
      logRequest(deps.log, request, res.status, stamp, path);
      set.status = res.status;
      return res;
    })
    .get('/api/health', page(() => reply('{"status":"ok"}')))
    .get('/api/openapi.json', page(() => reply(openapiJson())))
    .get('/api/docs', page(() => reply((docs ??= docsPage(ops)), 'text/html; charset=utf-8')))
    .use(oauthRoutes(deps))
    .use(loginLinkRoutes(deps))
    .use(fileContentRoutes(deps))
    .use(assistantAvatarRoutes(deps))
    .use(v1Routes(deps, limits))
    // Parley as an MCP server, beside the operations (docs/mcp-server.md).
    .use(mcpRoutes(deps, limits))
    .use(mcpServerOAuthRoutes(deps))
    .use(mcpOAuthRoutes(deps));
  // The web app is a client like any other (docs/architecture.md): its routes only hand out files.
  if (deps.config.web) app.use(webRoutes(deps));

  registerOperations(app as unknown as Elysia, ops, deps, limits);
  return app;
}

export type App = ReturnType<typeof createApp>;
