import { t } from 'elysia';
import { defineOperation } from '../../http/operation';
import { notFound } from '../../http/errors';
import { hashSecret } from '../../auth/tokens';
import { iso } from '../../ids';
import { createCode, listGrants, revokeGrant } from './oauth.store';
import { AuthorizationRequest, checkAuthorization, redirectWith } from './oauth-authorize';
import { baseUrlOf } from './oauth-metadata';
import { CODE_TTL_MS, newCode } from './oauth-tokens';

const Timestamp = t.String({ format: 'date-time' });

/**
 * The operations behind the consent page (web/src/oauth/) and Settings' list of connected
 * applications: an MCP client asks to act for the signed-in user; the user allows or denies; a
 * grant can be ended at any time (docs/mcp-server.md, "OAuth").
 */
export const oauthConsentOperations = [
  defineOperation({
    path: 'mcpAccess/checkAuthorization',
    summary: 'What an MCP client asks for, before the user allows it',
    description:
      'The consent page passes the authorization request it was opened with. An unknown client or a redirect address it did not register: 400, shown on the page. ' +
      'Any other fault goes back to the client: `refusedWith` is then the address to send the browser to (an OAuth error on its redirect); otherwise null.',
    input: AuthorizationRequest,
    output: t.Object({ clientName: t.String(), clientUri: t.Union([t.String(), t.Null()]), redirectHost: t.String(), scope: t.String(), refusedWith: t.Union([t.String(), t.Null()]) }),
    handler: async ({ input, deps, request }) => {
      const checked = await checkAuthorization(deps, input, baseUrlOf(deps, request));
      return {
        clientName: checked.client.name,
        clientUri: checked.client.clientUri,
        redirectHost: new URL(input.redirectUri).host || input.redirectUri,
        scope: checked.ok ? checked.scope : '',
        refusedWith: checked.ok ? null : checked.redirectTo,
      };
    },
  }),
  defineOperation({
    path: 'mcpAccess/approveAuthorization',
    summary: 'Allow an MCP client to use Parley for the caller',
    description:
      'Issues a one-time authorization code (valid a minute, bound to the PKCE challenge and the redirect address) and answers where to send the browser: the client\'s redirect with `code`, `state` and `iss`.',
    input: AuthorizationRequest,
    output: t.Object({ redirectTo: t.String() }),
    rateLimit: 'write',
    handler: async ({ input, user, deps, request }) => {
      const base = baseUrlOf(deps, request);
      const checked = await checkAuthorization(deps, input, base);
      if (!checked.ok) return { redirectTo: checked.redirectTo };
      const code = newCode();
      await deps.store.write((tx) =>
        createCode(tx, {
          hash: hashSecret(code),
          clientId: checked.client.id,
          userId: user.id,
          redirectUri: checked.redirectUri,
          codeChallenge: checked.codeChallenge,
          scope: checked.scope,
          resource: checked.resource,
          expiresAt: deps.now() + CODE_TTL_MS,
        }),
      );
      return { redirectTo: redirectWith(checked.redirectUri, { code, state: input.state, iss: base }) };
    },
  }),
  defineOperation({
    path: 'mcpAccess/denyAuthorization',
    summary: 'Refuse an MCP client',
    description: "Answers where to send the browser: the client's redirect with `error=access_denied`.",
    input: AuthorizationRequest,
    output: t.Object({ redirectTo: t.String() }),
    handler: async ({ input, deps, request }) => {
      const base = baseUrlOf(deps, request);
      const checked = await checkAuthorization(deps, input, base);
      if (!checked.ok) return { redirectTo: checked.redirectTo };
      return { redirectTo: redirectWith(checked.redirectUri, { error: 'access_denied', error_description: 'The user did not allow it.', state: input.state, iss: base }) };
    },
  }),
  defineOperation({
    path: 'mcpAccess/listGrants',
    summary: "The MCP clients the caller allowed, still in force",
    description: 'Most recently used first. Each can be ended with mcpAccess/revokeGrant.',
    input: t.Object({}),
    output: t.Object({
      grants: t.Array(
        t.Object({ grantId: t.String(), clientName: t.String(), clientUri: t.Union([t.String(), t.Null()]), scope: t.String(), createdAt: Timestamp, lastUsedAt: t.Union([Timestamp, t.Null()]) }),
      ),
    }),
    handler: async ({ user, deps }) => ({
      grants: (await deps.store.read((tx) => listGrants(tx, user.id))).map((g) => ({
        grantId: g.id,
        clientName: g.clientName,
        clientUri: g.clientUri,
        scope: g.scope,
        createdAt: iso(g.createdAt),
        lastUsedAt: g.lastUsedAt == null ? null : iso(g.lastUsedAt),
      })),
    }),
  }),
  defineOperation({
    path: 'mcpAccess/revokeGrant',
    summary: 'End an MCP client\'s access',
    description: "Its tokens stop working at once, on every instance. Another user's grant or an unknown id: 404.",
    input: t.Object({ grantId: t.String() }),
    output: t.Object({ success: t.Literal(true) }),
    errors: [404],
    handler: async ({ input, user, deps }) => {
      const revoked = await deps.store.write((tx) => revokeGrant(tx, user.id, input.grantId, deps.now()));
      if (!revoked) throw notFound();
      return { success: true as const };
    },
  }),
];
