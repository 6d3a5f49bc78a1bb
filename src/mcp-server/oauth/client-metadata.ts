const AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'];
const MAX_REDIRECTS = 10;
const MAX_URI = 2000;
/** Schemes that run or read something in the browser itself rather than hand the code to an app. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:', 'filesystem:', 'ws:', 'wss:', 'ftp:']);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export type ClientMetadata = { name: string; redirectUris: string[]; authMethod: string; clientUri: string | null };
type Refusal = { error: 'invalid_client_metadata' | 'invalid_redirect_uri'; description: string };

/**
 * Check a dynamic client registration (RFC 7591 §2, with OAuth 2.1's rules for redirects):
 * `https` addresses; `http` only to this machine (a desktop client's loopback listener, RFC 8252
 * §7.3); an app's own scheme (`vscode:`, `cursor:`, RFC 8252 §7.1); never a scheme that runs in
 * the browser, and no fragment. The client authenticates as it says (`none` for a public client
 * with PKCE alone; RFC 7591's default is `client_secret_basic`).
 */
export function checkClientMetadata(body: unknown): ClientMetadata | Refusal {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { error: 'invalid_client_metadata', description: 'The registration must be a JSON object.' };
  const m = body as Record<string, unknown>;
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || !uris.length || uris.length > MAX_REDIRECTS || !uris.every((u) => typeof u === 'string' && u.length <= MAX_URI))
    return { error: 'invalid_redirect_uri', description: `redirect_uris must list 1 to ${MAX_REDIRECTS} addresses.` };
  for (const uri of uris as string[]) {
    const why = redirectProblem(uri);
    if (why) return { error: 'invalid_redirect_uri', description: `${uri}: ${why}` };
  }
  const authMethod = m.token_endpoint_auth_method ?? 'client_secret_basic';
  if (typeof authMethod !== 'string' || !AUTH_METHODS.includes(authMethod))
    return { error: 'invalid_client_metadata', description: `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}.` };
  const grants = m.grant_types ?? ['authorization_code'];
  if (!Array.isArray(grants) || !grants.every((g) => g === 'authorization_code' || g === 'refresh_token'))
    return { error: 'invalid_client_metadata', description: 'grant_types may hold authorization_code and refresh_token only.' };
  const responses = m.response_types ?? ['code'];
  if (!Array.isArray(responses) || !responses.every((r) => r === 'code')) return { error: 'invalid_client_metadata', description: 'response_types may hold code only.' };
  const name = typeof m.client_name === 'string' && m.client_name.trim() ? m.client_name.trim().slice(0, 200) : 'An MCP client';
  const clientUri = typeof m.client_uri === 'string' && /^https:\/\//.test(m.client_uri) && m.client_uri.length <= MAX_URI ? m.client_uri : null;
  return { name, redirectUris: uris as string[], authMethod, clientUri };
}

function redirectProblem(uri: string): string | undefined {
  if (!URL.canParse(uri)) return 'not an absolute address';
  const url = new URL(uri);
  if (url.hash) return 'a redirect address may not have a fragment';
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `the ${url.protocol} scheme is not allowed`;
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) return 'http is allowed only to this machine (localhost, 127.0.0.1, [::1]); use https';
  return undefined;
}
