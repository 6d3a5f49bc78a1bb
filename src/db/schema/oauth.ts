import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { users } from './users';

/**
 * Parley as an OAuth 2.1 authorization server for MCP clients (src/mcp-server/oauth/,
 * docs/mcp-server.md "OAuth"): the clients that registered themselves (dynamic client
 * registration), the one-time codes of a consent, the grants a user gave (what Settings lists and
 * revokes) and their tokens. Every secret is stored as its SHA-256 hash only.
 */
export const oauthClients = sqliteTable('oauth_clients', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** The redirect URIs it registered, exactly as registered (JSON array). */
  redirectUris: text('redirect_uris', { mode: 'json' }).$type<string[]>().notNull(),
  /** `none` (a public client: PKCE alone), `client_secret_post` or `client_secret_basic`. */
  authMethod: text('auth_method').notNull(),
  secretHash: text('secret_hash'),
  clientUri: text('client_uri'),
  createdAt: integer('created_at').notNull(),
});

/** The client a row is of and the user it acts for: both cascade, so a gone user or client takes it along. */
const clientAndUser = () => ({
  clientId: text('client_id')
    .notNull()
    .references(() => oauthClients.id, { onDelete: 'cascade' }),
  userId: text('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
});

export const oauthCodes = sqliteTable(
  'oauth_codes',
  {
    /** SHA-256 of the code. */
    hash: text('hash').primaryKey(),
    ...clientAndUser(),
    redirectUri: text('redirect_uri').notNull(),
    /** PKCE: the S256 challenge the token request's verifier must match. */
    codeChallenge: text('code_challenge').notNull(),
    scope: text('scope').notNull(),
    resource: text('resource'),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('oauth_codes_expires_idx').on(t.expiresAt)],
);

/** A user's consent to one client: the row Settings shows as a connected app, and revokes. */
export const oauthGrants = sqliteTable(
  'oauth_grants',
  {
    id: text('id').primaryKey(),
    ...clientAndUser(),
    scope: text('scope').notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('oauth_grants_user_idx').on(t.userId)],
);

/** Access tokens (short-lived) and refresh tokens (rotated at each use) of a grant. */
export const oauthTokens = sqliteTable(
  'oauth_tokens',
  {
    /** SHA-256 of the token. */
    hash: text('hash').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['access', 'refresh'] }).notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('oauth_tokens_grant_idx').on(t.grantId), index('oauth_tokens_expires_idx').on(t.expiresAt)],
);

export type OAuthClient = typeof oauthClients.$inferSelect;
export type OAuthGrant = typeof oauthGrants.$inferSelect;
