import { bearerAuthChallengeResponse, OAuthError, OAuthErrorCode, originValidationResponse, type AuthInfo } from '@modelcontextprotocol/server';
import type { AppDeps } from '../deps';
import type { Limits } from '../http/shared-limits';
import { newId } from '../ids';
import { createParleyMcpHandler } from './mcp-server';
import { verifyMcpToken } from './mcp-auth';
import type { McpCaller } from './mcp-tool';
import { baseUrlOf, MCP_SCOPE, protectedResourceMetadataUrl } from './oauth/oauth-metadata';

export interface McpDoor {
  serve(request: Request): Promise<Response>;
  close(): Promise<void>;
}

/**
 * What answers a request to `/mcp` (mcp.routes.ts): its `Origin`, when a browser sent one, must
 * be Parley's own or a loopback page's (403 otherwise: DNS rebinding); then its credential (401
 * with the OAuth challenge without one); then the SDK's handler, with the caller, on a fresh
 * server instance.
 */
export function createMcpDoor(deps: AppDeps, limits: Limits): McpDoor {
  const handler = createParleyMcpHandler(deps);
  return {
    async serve(request) {
      const refused = originValidationResponse(request, allowedOrigins(deps));
      if (refused) return refused;
      const resourceMetadataUrl = protectedResourceMetadataUrl(baseUrlOf(deps, request));
      let authInfo: AuthInfo;
      let caller: McpCaller;
      try {
        const apiKey = request.headers.get('x-api-key');
        const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]?.trim();
        const token = bearer || apiKey?.trim();
        if (!token) throw new OAuthError(OAuthErrorCode.InvalidToken, 'An API key or an access token is required.');
        const verified = await verifyMcpToken(deps, token);
        caller = { user: verified.user, requestId: newId(), limits };
        authInfo = { ...verified.info, extra: { caller } };
      } catch (err) {
        // A fault of Parley's own (the database) is not the client's credential: the usual 500.
        if (!(err instanceof OAuthError)) throw err;
        // The scope a client should ask for is named too (the MCP authorization spec's SHOULD).
        return bearerAuthChallengeResponse(err, { resourceMetadataUrl, requiredScopes: [MCP_SCOPE] });
      }
      return handler.fetch(request, { authInfo });
    },
    close: () => handler.close(),
  };
}

/**
 * The hostnames a browser page calling `/mcp` may be on: Parley's own (PARLEY_PUBLIC_URL) and
 * loopback ones (the MCP Inspector, a local agent's page). Never the request's own Host: after a
 * DNS rebinding the attacker's page has the same origin as the Host it sends.
 */
function allowedOrigins(deps: AppDeps): string[] {
  const own = deps.config.publicUrl ? [new URL(deps.config.publicUrl).hostname] : [];
  return ['localhost', '127.0.0.1', '[::1]', ...own];
}
