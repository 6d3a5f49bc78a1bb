import { OAuthError, OAuthErrorCode, type AuthInfo } from '@modelcontextprotocol/server';
import type { AppDeps } from '../deps';
import { authenticate } from '../auth/authenticate';
import type { User } from '../db/schema';
import { API_KEY_PREFIX } from '../auth/tokens';
import { OAUTH_ACCESS_PREFIX } from './oauth/oauth-tokens';
import { authenticateOAuthAccess } from './oauth/oauth-authenticate';

/**
 * How long the SDK is told a key or a session is good for: they have no expiry of their own that
 * matters within one request (a revoked one is refused at the next request), and the SDK refuses
 * a token without one.
 */
const REQUEST_VALIDITY_S = 3600;

/**
 * The credential of an MCP request: `Authorization: Bearer` with a Parley API key (`pk_…`), an
 * access token Parley issued to an MCP client over OAuth (docs/mcp-server.md), or a session token
 * (a native app's); or an `x-api-key` header. Throws the SDK's `invalid_token` for anything else,
 * which it answers 401 with the `WWW-Authenticate` challenge that starts a client's OAuth flow.
 */
export async function verifyMcpToken(deps: AppDeps, token: string): Promise<{ user: User; info: AuthInfo }> {
  const now = deps.now();
  let user: User | undefined;
  let expiresAt = Math.floor(now / 1000) + REQUEST_VALIDITY_S;
  let clientId = 'parley-api-key';
  let scopes: string[] = [];
  if (token.startsWith(OAUTH_ACCESS_PREFIX)) {
    const granted = await authenticateOAuthAccess(deps, token, now);
    if (granted) {
      user = granted.user;
      expiresAt = Math.floor(granted.expiresAt / 1000);
      clientId = granted.clientId;
      scopes = granted.scopes;
    }
  } else {
    // An API key travels here as a bearer token; authenticate() looks keys up by `x-api-key`.
    const headers = token.startsWith(API_KEY_PREFIX) ? new Headers({ 'x-api-key': token }) : new Headers({ authorization: `Bearer ${token}` });
    const auth = await authenticate(deps.store, headers, deps.config.sessionTtlDays, now);
    user = auth?.principal.user;
    if (auth?.principal.credential.kind === 'session') clientId = 'parley-session';
  }
  if (!user) throw new OAuthError(OAuthErrorCode.InvalidToken, 'The token is unknown, expired or revoked.');
  return { user, info: { token, clientId, scopes, expiresAt } };
}
