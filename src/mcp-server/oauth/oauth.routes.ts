import { Elysia } from 'elysia';
import type { AppDeps } from '../../deps';
import { pageRoute } from '../../http/register';
import { readBody, readBoundedBody } from '../../http/body';
import { SMALL_BODY_BYTES } from '../../http/operation';
import { hashSecret, sameHash } from '../../auth/tokens';
import type { OAuthClient } from '../../db/schema';
import { countPendingClients, createClient, createGrant, findClient, revokeByToken, rotateRefresh, takeCode } from './oauth.store';
import { ACCESS_TTL_MS, issueTokens, newClientSecret } from './oauth-tokens';
import { authorizationServerMetadata, baseUrlOf, OAUTH_PATHS, protectedResourceMetadata } from './oauth-metadata';
import { isOwnResource } from './oauth-authorize';
import { checkClientMetadata } from './client-metadata';

/** Paths these routes answer, for the 405 of another method (src/app.ts). */
export const OAUTH_ROUTES: Record<string, string> = {
  [OAUTH_PATHS.protectedResource]: 'GET, HEAD, OPTIONS',
  [`${OAUTH_PATHS.protectedResource}/mcp`]: 'GET, HEAD, OPTIONS',
  [OAUTH_PATHS.authorizationServer]: 'GET, HEAD, OPTIONS',
  [OAUTH_PATHS.register]: 'POST, OPTIONS',
  [OAUTH_PATHS.token]: 'POST, OPTIONS',
  [OAUTH_PATHS.revoke]: 'POST, OPTIONS',
};

/**
 * What an OAuth error says (RFC 6749 §5.2): `{error, error_description}`, never Parley's
 * envelope, which OAuth clients do not read.
 */
class OAuthFailure extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

/**
 * Any page may read these answers (no cookie is involved: the token is the credential), so
 * browser-based MCP clients can discover, register and trade codes from their own origin.
 */
const CORS = { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, POST, OPTIONS', 'access-control-allow-headers': 'authorization, content-type, mcp-protocol-version' };

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...CORS, ...headers } });

/**
 * Parley as the OAuth 2.1 authorization server of its own `/mcp` (docs/mcp-server.md, "OAuth"):
 * the metadata documents (RFC 9728, RFC 8414), dynamic client registration (RFC 7591), the token
 * endpoint (authorization code with PKCE, rotating refresh tokens) and revocation (RFC 7009).
 * The authorization endpoint is the web app's consent page, over the mcp/* operations.
 */
export function oauthRoutes(deps: AppDeps) {
  type Ctx = { request: Request };
  const route = (fn: (request: Request) => Promise<Response> | Response) =>
    pageRoute<Ctx>(deps, async ({ request }) => {
      try {
        return await fn(request);
      } catch (err) {
        if (err instanceof OAuthFailure) {
          const headers: Record<string, string> = err.status === 401 ? { 'www-authenticate': 'Basic realm="parley"' } : err.status === 429 ? { 'retry-after': '3600' } : {};
          return json({ error: err.error, error_description: err.description }, err.status, headers);
        }
        throw err;
      }
    });
  const preflight = route(() => new Response(null, { status: 204, headers: CORS }));
  const resource = route((request) => json(protectedResourceMetadata(baseUrlOf(deps, request))));
  return new Elysia({ name: 'mcp-oauth' })
    .get(OAUTH_PATHS.protectedResource, resource)
    .get(`${OAUTH_PATHS.protectedResource}/mcp`, resource)
    .get(OAUTH_PATHS.authorizationServer, route((request) => json(authorizationServerMetadata(baseUrlOf(deps, request)))))
    .post(OAUTH_PATHS.register, route((request) => register(deps, request)), { parse: 'none' })
    .post(OAUTH_PATHS.token, route((request) => token(deps, request)), { parse: 'none' })
    .post(OAUTH_PATHS.revoke, route((request) => revoke(deps, request)), { parse: 'none' })
    .options(OAUTH_PATHS.protectedResource, preflight)
    .options(`${OAUTH_PATHS.protectedResource}/mcp`, preflight)
    .options(OAUTH_PATHS.authorizationServer, preflight)
    .options(OAUTH_PATHS.register, preflight)
    .options(OAUTH_PATHS.token, preflight)
    .options(OAUTH_PATHS.revoke, preflight);
}

async function register(deps: AppDeps, request: Request): Promise<Response> {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(await readBody(request, SMALL_BODY_BYTES)));
  } catch {
    throw new OAuthFailure('invalid_client_metadata', 'The registration must be a JSON object of at most 64 KiB.');
  }
  const checked = checkClientMetadata(body);
  if ('error' in checked) throw new OAuthFailure(checked.error, checked.description);
  // Open to anyone, so bounded: unused registrations are deleted a day on (src/tasks/prune-expired.ts).
  if ((await deps.store.read((tx) => countPendingClients(tx))) >= deps.config.mcpOAuthMaxPendingClients)
    throw new OAuthFailure('temporarily_unavailable', 'Too many applications registered without being allowed yet: try again later.', 429);
  const secret = checked.authMethod === 'none' ? undefined : newClientSecret();
  const client = await deps.store.write((tx) =>
    createClient(tx, { name: checked.name, redirectUris: checked.redirectUris, authMethod: checked.authMethod, secretHash: secret ? hashSecret(secret) : null, clientUri: checked.clientUri }, deps.now()),
  );
  return json(
    {
      client_id: client.id,
      client_id_issued_at: Math.floor(client.createdAt / 1000),
      client_name: client.name,
      redirect_uris: client.redirectUris,
      token_endpoint_auth_method: client.authMethod,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: 'mcp',
      ...(client.clientUri ? { client_uri: client.clientUri } : {}),
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    },
    201,
  );
}

/** The form of a token or revocation request (application/x-www-form-urlencoded, RFC 6749 §3.2). */
async function formOf(request: Request): Promise<URLSearchParams> {
  if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded'))
    throw new OAuthFailure('invalid_request', 'Send the request as application/x-www-form-urlencoded.');
  return new URLSearchParams(new TextDecoder().decode(await readBoundedBody(request, SMALL_BODY_BYTES)));
}

/** The client a token request comes from, authenticated as it registered (RFC 6749 §2.3). */
async function clientOf(deps: AppDeps, request: Request, form: URLSearchParams): Promise<OAuthClient> {
  let id = form.get('client_id') ?? undefined;
  let secret = form.get('client_secret') ?? undefined;
  let method: string = secret ? 'client_secret_post' : 'none';
  const basic = /^Basic\s+(.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
  if (basic) {
    const decoded = Buffer.from(basic, 'base64').toString();
    const colon = decoded.indexOf(':');
    id = decodeURIComponent(decoded.slice(0, colon));
    secret = decodeURIComponent(decoded.slice(colon + 1));
    method = 'client_secret_basic';
  }
  const client = id ? await deps.store.read((tx) => findClient(tx, id)) : undefined;
  if (!client) throw new OAuthFailure('invalid_client', 'Unknown client.', 401);
  if (client.authMethod !== 'none') {
    // A confidential client may send its secret either way; a wrong or missing one is refused.
    if (!secret || !client.secretHash || !sameHash(client.secretHash, hashSecret(secret))) throw new OAuthFailure('invalid_client', 'The client secret is wrong or missing.', 401);
  } else if (method !== 'none') throw new OAuthFailure('invalid_client', 'This client registered without a secret.', 401);
  return client;
}

async function token(deps: AppDeps, request: Request): Promise<Response> {
  const form = await formOf(request);
  const client = await clientOf(deps, request, form);
  const base = baseUrlOf(deps, request);
  const resource = form.get('resource');
  if (resource !== null && !isOwnResource(resource, base)) throw new OAuthFailure('invalid_target', `The resource must be ${base}/mcp.`);
  const now = deps.now();
  const issued = issueTokens(now);
  const grantType = form.get('grant_type');
  if (grantType === 'authorization_code') {
    const code = form.get('code');
    const verifier = form.get('code_verifier');
    if (!code || !verifier) throw new OAuthFailure('invalid_request', 'code and code_verifier are required.');
    const granted = await deps.store.write(function* (tx) {
      const c = yield* takeCode(tx, hashSecret(code), now);
      if (!c || c.clientId !== client.id || c.redirectUri !== form.get('redirect_uri') || !pkceMatches(verifier, c.codeChallenge)) return undefined;
      return yield* createGrant(tx, { clientId: client.id, userId: c.userId, scope: c.scope }, issued.hashes, now);
    });
    if (!granted) throw new OAuthFailure('invalid_grant', 'The code is unknown, used, expired, or does not match the redirect address or the code verifier.');
    return tokenAnswer(issued, granted.scope);
  }
  if (grantType === 'refresh_token') {
    const refresh = form.get('refresh_token');
    if (!refresh) throw new OAuthFailure('invalid_request', 'refresh_token is required.');
    const grant = await deps.store.write((tx) => rotateRefresh(tx, hashSecret(refresh), client.id, issued.hashes, now));
    if (!grant) throw new OAuthFailure('invalid_grant', 'The refresh token is unknown, used, expired or revoked.');
    return tokenAnswer(issued, grant.scope);
  }
  throw new OAuthFailure('unsupported_grant_type', 'Only authorization_code and refresh_token are supported.');
}

const tokenAnswer = (issued: ReturnType<typeof issueTokens>, scope: string) =>
  json({ access_token: issued.access, token_type: 'Bearer', expires_in: ACCESS_TTL_MS / 1000, refresh_token: issued.refresh, scope }, 200, { pragma: 'no-cache' });

/** PKCE S256 (RFC 7636 §4.6): the verifier's SHA-256, base64url, is the challenge. */
function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  const computed = new Bun.CryptoHasher('sha256').update(verifier).digest('base64url');
  return computed.length === challenge.length && Buffer.from(computed).equals(Buffer.from(challenge));
}

async function revoke(deps: AppDeps, request: Request): Promise<Response> {
  const form = await formOf(request);
  const client = await clientOf(deps, request, form);
  const value = form.get('token');
  if (!value) throw new OAuthFailure('invalid_request', 'token is required.');
  await deps.store.write((tx) => revokeByToken(tx, hashSecret(value), client.id, deps.now()));
  // RFC 7009 §2.2: the same answer whether or not the token was known.
  return json({});
}
