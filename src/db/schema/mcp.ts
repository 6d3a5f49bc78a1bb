import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users';

/**
 * An MCP server whose tools the model may call (docs/mcp.md). An admin's (`owner_id` null: every
 * user may use it) or a user's own (remote only, when the admin allows it). Secrets (headers, a
 * stdio server's environment, a pre-registered OAuth client's secret) are sealed with
 * src/connections/seal.ts. Every instance drops its pooled connections to a server when its
 * `version` moves.
 */
export const mcpServers = sqliteTable(
  'mcp_servers',
  {
    id: text('id').primaryKey(),
    /** Null: an admin's server, offered to every user. */
    ownerId: text('owner_id').references(() => users.id, { onDelete: 'cascade' }),
    /** Lowercase `[a-z0-9-]`, unique among what one user sees: the middle of its tools' names (`mcp__<name>__<tool>`). */
    name: text('name').notNull(),
    /** `http`: streamable HTTP, falling back to HTTP+SSE for older servers; `stdio`: a command of the admin's own configuration. */
    transport: text('transport', { enum: ['http', 'stdio'] }).notNull(),
    /** http: the server's endpoint. */
    url: text('url'),
    /** stdio: the program and its arguments, as the admin gave them (never a user's input). */
    command: text('command', { mode: 'json' }).$type<string[]>(),
    /** Sealed JSON `{headers?: {...}, env?: {...}}`: extra request headers (an API key), a stdio server's environment. */
    secrets: text('secrets'),
    /** `none`, or `oauth`: each user signs in to the server (OAuth 2.1) before its tools are offered to them. */
    auth: text('auth', { enum: ['none', 'oauth'] }).notNull(),
    /** A pre-registered OAuth client (servers without dynamic registration): its id. */
    oauthClientId: text('oauth_client_id'),
    /** Sealed: the pre-registered client's secret, or the client a dynamic registration gave (JSON). */
    oauthClient: text('oauth_client'),
    /** `ask`: every call waits for the user's approval (the tool approval of docs/chat.md); `never`: runs at once. */
    approval: text('approval', { enum: ['never', 'ask'] }).notNull(),
    /** Seconds a call may go silent; null: PARLEY_MCP_CALL_TIMEOUT_S. */
    timeoutS: integer('timeout_s'),
    enabled: integer('enabled', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    version: integer('version').notNull(),
  },
  (t) => [
    uniqueIndex('mcp_servers_owner_name_idx').on(t.ownerId, t.name),
    // SQLite and PostgreSQL both see NULLs as distinct in a unique index: the admin's names get their own.
    uniqueIndex('mcp_servers_admin_name_idx').on(t.name).where(sql`${t.ownerId} IS NULL`),
  ],
);

/**
 * One user's OAuth session with one MCP server: the tokens (sealed), when the access token
 * expires (plain, so a refresh can be planned without opening them), and a sign-in in progress
 * (its `state` hashed, the PKCE verifier and the client it registered sealed).
 */
export const mcpTokens = sqliteTable(
  'mcp_tokens',
  {
    serverId: text('server_id')
      .notNull()
      .references(() => mcpServers.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Sealed JSON: the token response (`access_token`, `refresh_token`, `token_type`, `scope`). */
    tokens: text('tokens'),
    /** Milliseconds; null: the server gave no lifetime. */
    expiresAt: integer('expires_at'),
    /** SHA-256 of the sign-in's `state` (hex), while one is in progress. */
    flowState: text('flow_state'),
    /** Sealed JSON: the sign-in's PKCE verifier, client, authorization server and resource. */
    flow: text('flow'),
    flowExpiresAt: integer('flow_expires_at'),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.serverId, t.userId] }), index('mcp_tokens_flow_state_idx').on(t.flowState)],
);

export type McpServerRow = typeof mcpServers.$inferSelect;
export type McpTokenRow = typeof mcpTokens.$inferSelect;
