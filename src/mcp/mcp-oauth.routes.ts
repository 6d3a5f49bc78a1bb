import { Elysia } from 'elysia';
import type { AppDeps } from '../deps';
import { pageRoute } from '../http/register';
import { authenticate } from '../auth/authenticate';
import { esc, htmlPage } from '../auth/oauth.page';
import { McpError } from './mcp-errors';
import { CLIENT_NAME } from './mcp-oauth-session';

/**
 * The browser's side of signing in to an MCP server (docs/mcp.md, "Signing in"): the
 * authorization server sends the browser back here with a code, which is exchanged for tokens
 * (sealed at rest), and the browser goes on to the web app's settings. When the browser carries a
 * Parley session, it must be the user who started the sign-in, so nobody can land their own MCP
 * account in someone else's Parley. The client-ID metadata document describes Parley to servers
 * that take one instead of a dynamic registration (an https `PARLEY_PUBLIC_URL` only).
 */
export const MCP_CALLBACK_PATH = '/api/mcp/oauth/callback';
export const MCP_CLIENT_METADATA_PATH = '/api/mcp/oauth/client-metadata.json';

export function mcpOAuthRoutes(deps: AppDeps) {
  type Ctx = { request: Request };
  return new Elysia({ name: 'mcp-oauth' })
    .get(MCP_CALLBACK_PATH, pageRoute<Ctx>(deps, ({ request }) => callback(deps, request)))
    .get(
      MCP_CLIENT_METADATA_PATH,
      pageRoute<Ctx>(deps, () => {
        const base = deps.config.publicUrl;
        if (!base?.startsWith('https://')) return new Response('{"error":"not_found"}', { status: 404, headers: { 'content-type': 'application/json' } });
        const doc = {
          client_id: `${base}${MCP_CLIENT_METADATA_PATH}`,
          client_name: CLIENT_NAME,
          client_uri: base,
          redirect_uris: [`${base}${MCP_CALLBACK_PATH}`],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        };
        return new Response(JSON.stringify(doc), { headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=3600' } });
      }),
    );
}

async function callback(deps: AppDeps, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const state = url.searchParams.get('state') ?? '';
  const code = url.searchParams.get('code') ?? '';
  const denied = url.searchParams.get('error');
  if (denied) return done(deps, 'error', denied === 'access_denied' ? 'The sign-in was cancelled at the MCP server.' : `The MCP server's sign-in answered ${denied.slice(0, 100)}.`);
  if (!state || !code) return done(deps, 'error', 'This address is where an MCP server sends a sign-in back; it came without one.');
  const signedIn = await authenticate(deps.store, request.headers, deps.config.sessionTtlDays, deps.now());
  try {
    const { serverName } = await deps.mcp.tokens.finish(state, code, url.searchParams.get('iss') ?? undefined, signedIn?.principal.user.id);
    return done(deps, 'connected', `Parley can now use ${serverName} for you.`, serverName);
  } catch (err) {
    if (err instanceof McpError) return done(deps, 'error', err.message);
    deps.log.error('mcp sign-in failed', { cause: err instanceof Error ? err.stack : String(err) });
    return done(deps, 'error', 'The sign-in could not be completed. Please try again.');
  }
}

/** On to the web app's settings (which say what happened), or a small page when there is no web app. */
function done(deps: AppDeps, outcome: 'connected' | 'error', message: string, server?: string): Response {
  const app = deps.config.appUrl ?? (deps.config.web ? '' : undefined);
  if (app !== undefined) {
    const params = new URLSearchParams({ mcp: outcome, ...(server ? { server } : {}), ...(outcome === 'error' ? { message } : {}) });
    return new Response(null, { status: 303, headers: { location: `${app}/settings?${params}` } });
  }
  return htmlPage(outcome === 'connected' ? 200 : 400, outcome === 'connected' ? 'Connected' : 'Not connected', `<p>${esc(message)}</p><p>You can close this window.</p>`);
}

/** OpenAPI entries for the two browser routes (pages, not operations). */
export const mcpOAuthOpenApiPaths = {
  [MCP_CALLBACK_PATH]: {
    get: {
      operationId: 'mcp.oauthCallback',
      tags: ['mcp'],
      summary: "Where an MCP server's sign-in sends the browser back (browser navigation)",
      description:
        'Exchanges the code for tokens (sealed at rest) and redirects (303) to the web app\'s `/settings?mcp=connected&server=…` (or `mcp=error&message=…`), or `PARLEY_APP_URL`; without a web app, a small page. A browser signed in to Parley as another user than the one who started the sign-in is refused.',
      security: [],
      parameters: ['code', 'state', 'iss', 'error'].map((name) => ({ name, in: 'query', required: false, schema: { type: 'string' } })),
      responses: { 303: { description: 'On to the settings page' }, 200: { description: 'HTML page: connected' }, 400: { description: 'HTML page: not connected, and why' } },
    },
  },
  [MCP_CLIENT_METADATA_PATH]: {
    get: {
      operationId: 'mcp.clientMetadata',
      tags: ['mcp'],
      summary: "Parley's OAuth client metadata document, for MCP servers that take one instead of a registration",
      security: [],
      responses: { 200: { description: 'The document (JSON)' }, 404: { description: 'PARLEY_PUBLIC_URL is not an https address' } },
    },
  },
};
