import { t } from 'elysia';
import type { AppDeps } from '../../deps';
import type { OAuthClient } from '../../db/schema';
import { AppError } from '../../http/errors';
import { findClient } from './oauth.store';
import { MCP_SCOPE } from './oauth-metadata';

/** The query of an authorization request, as the consent page passes it on (RFC 6749 §4.1.1, PKCE). */
export const AuthorizationRequest = t.Object({
  clientId: t.String({ maxLength: 100 }),
  redirectUri: t.String({ maxLength: 2000 }),
  responseType: t.Optional(t.String({ maxLength: 100 })),
  codeChallenge: t.Optional(t.String({ maxLength: 200 })),
  codeChallengeMethod: t.Optional(t.String({ maxLength: 20 })),
  scope: t.Optional(t.String({ maxLength: 1000 })),
  state: t.Optional(t.String({ maxLength: 2000 })),
  resource: t.Optional(t.String({ maxLength: 2000 })),
});
export type AuthorizationRequest = typeof AuthorizationRequest.static;

export type CheckedRequest =
  | { ok: true; client: OAuthClient; redirectUri: string; scope: string; codeChallenge: string; resource: string | null }
  /** Client and redirect are sound, the rest is not: the answer goes back to the client (RFC 6749 §4.1.2.1). */
  | { ok: false; client: OAuthClient; redirectTo: string };

/** A redirect to the client with these parameters added to its own (its `state` too). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/**
 * Check an authorization request. An unknown client, or a redirect URI it did not register, is a
 * 400 the consent page shows: Parley never sends the browser to an address it cannot vouch for.
 * Anything else wrong (no PKCE, another response type, a scope or resource Parley does not
 * serve) goes back to the client as an OAuth error on its redirect.
 */
export async function checkAuthorization(deps: AppDeps, input: AuthorizationRequest, base: string): Promise<CheckedRequest> {
  const client = await deps.store.read((tx) => findClient(tx, input.clientId));
  if (!client) throw new AppError('BAD_REQUEST', { message: 'No application is registered with this client id: start connecting again from the application.' });
  if (!client.redirectUris.includes(input.redirectUri)) throw new AppError('BAD_REQUEST', { message: 'The address to return to is not one the application registered: Parley will not send you there.' });
  const refuse = (error: string, description: string): CheckedRequest => ({
    ok: false,
    client,
    redirectTo: redirectWith(input.redirectUri, { error, error_description: description, state: input.state, iss: base }),
  });
  if (input.responseType !== 'code') return refuse('unsupported_response_type', 'Only the authorization code flow (response_type=code) is supported.');
  if (!input.codeChallenge || input.codeChallengeMethod !== 'S256') return refuse('invalid_request', 'PKCE with S256 is required (code_challenge and code_challenge_method=S256).');
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(input.codeChallenge)) return refuse('invalid_request', 'The code_challenge is not a base64url SHA-256.');
  const scopes = (input.scope ?? '').split(' ').filter(Boolean);
  if (scopes.some((s) => s !== MCP_SCOPE)) return refuse('invalid_scope', `The only scope is "${MCP_SCOPE}".`);
  if (input.resource !== undefined && !isOwnResource(input.resource, base)) return refuse('invalid_target', `The resource must be ${base}/mcp.`);
  return { ok: true, client, redirectUri: input.redirectUri, scope: MCP_SCOPE, codeChallenge: input.codeChallenge, resource: input.resource ?? null };
}

/** RFC 8707: the resource a token is asked for must be Parley's `/mcp` (or the server itself). */
export function isOwnResource(resource: string, base: string): boolean {
  const r = resource.replace(/\/+$/, '');
  return r === `${base}/mcp` || r === base;
}
