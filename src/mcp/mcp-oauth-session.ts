import type { AuthResult, FetchLike, OAuthClientProvider, OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { loadMcpSdk } from './mcp-sdk';

/**
 * One user's OAuth 2.1 session with one MCP server, as plain data: what the SDK's `auth()` reads
 * and writes through an `OAuthClientProvider`. The SDK does the protocol (protected-resource and
 * authorization-server discovery, the resource check, scope selection, dynamic client
 * registration or a client-ID metadata document, PKCE, the token and refresh requests, the
 * token endpoint's client authentication); Parley keeps the session sealed in the database
 * (mcp-tokens.ts) or, for `parley mcp check`, in memory.
 */
export interface OAuthSession {
  tokens?: StoredOAuthTokens;
  client?: StoredOAuthClientInformation;
  discovery?: OAuthDiscoveryState;
  codeVerifier?: string;
  /** Set by a sign-in's start: where the user's browser goes. */
  authorizationUrl?: string;
  state?: string;
}

export interface SessionOptions {
  redirectUrl: string;
  /** An https URL serving Parley's client metadata document, for servers that take one instead of a registration. */
  clientMetadataUrl?: string;
  /** A client the admin registered with the server beforehand (its servers have no dynamic registration). */
  preregistered?: { client_id: string; client_secret?: string };
  /** Makes the `state` of a new sign-in. */
  newState?: () => string;
  /** Called when the flow sends the user to the authorization server (`parley mcp check` follows it itself). */
  onRedirect?: (url: URL) => Promise<void>;
}

export const CLIENT_NAME = 'Parley';

/** The SDK's view of a session: an `OAuthClientProvider` reading and writing `session`. */
export function sessionProvider(session: OAuthSession, opts: SessionOptions): OAuthClientProvider {
  return {
    get redirectUrl() {
      return opts.redirectUrl;
    },
    clientMetadataUrl: opts.clientMetadataUrl,
    get clientMetadata() {
      return {
        client_name: CLIENT_NAME,
        redirect_uris: [opts.redirectUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: opts.preregistered?.client_secret ? 'client_secret_basic' : 'none',
      };
    },
    state: () => (session.state = opts.newState?.() ?? crypto.randomUUID()),
    clientInformation: () =>
      opts.preregistered
        ? { ...opts.preregistered, ...(opts.preregistered.client_secret ? { token_endpoint_auth_method: 'client_secret_basic' } : {}), ...(session.client?.issuer ? { issuer: session.client.issuer } : {}) }
        : session.client,
    saveClientInformation: (info) => {
      session.client = info;
    },
    tokens: () => session.tokens,
    saveTokens: (tokens) => {
      session.tokens = tokens;
    },
    redirectToAuthorization: async (url) => {
      session.authorizationUrl = url.href;
      await opts.onRedirect?.(url);
    },
    saveCodeVerifier: (verifier) => {
      session.codeVerifier = verifier;
    },
    codeVerifier: () => {
      if (!session.codeVerifier) throw new Error('No sign-in is in progress for this server.');
      return session.codeVerifier;
    },
    saveDiscoveryState: (state) => {
      session.discovery = state;
    },
    discoveryState: () => session.discovery,
    invalidateCredentials: (scope) => {
      if (scope === 'all' || scope === 'tokens') session.tokens = undefined;
      if (scope === 'all' || scope === 'client') session.client = undefined;
      if (scope === 'all' || scope === 'verifier') session.codeVerifier = undefined;
      if (scope === 'all' || scope === 'discovery') session.discovery = undefined;
    },
  };
}

/**
 * One step of the SDK's flow on `session` (changed in place): without a code, a refresh when the
 * session has a refresh token, else the start of a sign-in (`authorizationUrl` set, `REDIRECT`);
 * with a code, its exchange. `fresh` starts a new sign-in even with tokens at hand.
 */
export async function runAuth(
  session: OAuthSession,
  opts: SessionOptions & { serverUrl: string; fetchFn: FetchLike; code?: string; iss?: string; scope?: string; resourceMetadataUrl?: URL; fresh?: boolean },
): Promise<AuthResult> {
  const { auth } = await loadMcpSdk();
  return auth(sessionProvider(session, opts), {
    serverUrl: opts.serverUrl,
    fetchFn: opts.fetchFn,
    ...(opts.code !== undefined ? { authorizationCode: opts.code, iss: opts.iss } : {}),
    ...(opts.scope ? { scope: opts.scope } : {}),
    ...(opts.resourceMetadataUrl ? { resourceMetadataUrl: opts.resourceMetadataUrl } : {}),
    ...(opts.fresh ? { forceReauthorization: true } : {}),
  });
}

/** When the access token expires, in milliseconds since the epoch (`expires_in` counted from `savedAt`). */
export const expiryOf = (tokens: StoredOAuthTokens | undefined, savedAt: number): number | null =>
  typeof tokens?.expires_in === 'number' && tokens.expires_in > 0 ? savedAt + tokens.expires_in * 1000 : null;
