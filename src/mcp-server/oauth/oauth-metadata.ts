import type { AppDeps } from '../../deps';

/** The one scope an MCP client's token carries: the `/mcp` tools of the user who consented. */
export const MCP_SCOPE = 'mcp';

export const OAUTH_PATHS = {
  protectedResource: '/.well-known/oauth-protected-resource',
  authorizationServer: '/.well-known/oauth-authorization-server',
  /** The consent page of the web app (web/src/oauth/): it reads the request from its query. */
  authorize: '/oauth/authorize',
  token: '/mcp/oauth/token',
  register: '/mcp/oauth/register',
  revoke: '/mcp/oauth/revoke',
} as const;

/**
 * The address MCP clients reach Parley at: PARLEY_PUBLIC_URL, else the request's own origin. The
 * metadata only ever sends a client back to the host it already talks to, so the request's Host
 * is safe here (unlike a sign-in callback handed to an identity provider, docs/auth.md); behind
 * a TLS proxy, set PARLEY_PUBLIC_URL so the documents say `https`.
 */
export function baseUrlOf(deps: AppDeps, request: Request): string {
  if (deps.config.publicUrl) return deps.config.publicUrl.replace(/\/+$/, '');
  return new URL(request.url).origin;
}

/** RFC 9728's path-aware location for the `/mcp` resource: what the 401's `resource_metadata` names. */
export const protectedResourceMetadataUrl = (base: string) => `${base}${OAUTH_PATHS.protectedResource}/mcp`;

/** RFC 9728 protected resource metadata of `/mcp`. */
export function protectedResourceMetadata(base: string) {
  return {
    resource: `${base}/mcp`,
    authorization_servers: [base],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Parley',
    resource_documentation: `${base}/api/docs`,
  };
}

/** RFC 8414 authorization server metadata: Parley issues tokens for its own `/mcp`. */
export function authorizationServerMetadata(base: string) {
  return {
    issuer: base,
    authorization_endpoint: `${base}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${base}${OAUTH_PATHS.token}`,
    registration_endpoint: `${base}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${base}${OAUTH_PATHS.revoke}`,
    scopes_supported: [MCP_SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    // RFC 9207: the redirect back carries `iss`, so a client talking to several servers can tell whose code it got.
    authorization_response_iss_parameter_supported: true,
  };
}
