import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';

/**
 * An outside service Parley reaches (docs/connections.md): an AI server, an embeddings, images,
 * speech or search server. Rows are added by admins, found on loopback, or seeded at start from
 * the environment settings (`source: env`). Every instance caches adapters built from a row per
 * `version`, bumped on each change.
 */
export const connections = sqliteTable(
  'connections',
  {
    id: text('id').primaryKey(),
    /** Admin-chosen, unique, lowercase `[a-z0-9-]`: the prefix of the catalogue's model ids. */
    name: text('name').notNull().unique(),
    kind: text('kind', { enum: ['chat', 'embeddings', 'images', 'stt', 'tts', 'search', 'video'] }).notNull(),
    /** chat: `openai-chat` | `openai-responses` | `anthropic`; embeddings/images/stt/tts: `openai`; search: `searxng`. */
    api: text('api').notNull(),
    baseUrl: text('base_url').notNull(),
    /** The credential sealed by src/connections/seal.ts (key id + AES-GCM ciphertext), or null. */
    credential: text('credential'),
    /** Per-kind knobs (default model, timeouts, capabilities…): src/connections/connection-options.ts. */
    options: text('options', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    enabled: integer('enabled', { mode: 'boolean' }).notNull(),
    source: text('source', { enum: ['env', 'admin', 'discovered'] }).notNull(),
    /** May its base URL be on loopback or the LAN (local model servers are the point of most). */
    allowPrivate: integer('allow_private', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    version: integer('version').notNull(),
  },
  (t) => [index('connections_kind_idx').on(t.kind)],
);

/**
 * An admin's choices about one model of one connection. A model without a row is listed as its
 * connection reports it; a null override means "as detected".
 */
export const modelSettings = sqliteTable(
  'model_settings',
  {
    connectionId: text('connection_id')
      .notNull()
      .references(() => connections.id, { onDelete: 'cascade' }),
    /** The upstream model id. */
    model: text('model').notNull(),
    displayName: text('display_name'),
    hidden: integer('hidden', { mode: 'boolean' }).notNull(),
    position: integer('position'),
    vision: integer('vision', { mode: 'boolean' }),
    tools: integer('tools', { mode: 'boolean' }),
    thinking: integer('thinking', { mode: 'boolean' }),
    contextTokens: integer('context_tokens'),
    /** Subscription tiers that may use it; null: every tier. */
    tiers: text('tiers', { mode: 'json' }).$type<string[]>(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.connectionId, t.model] })],
);

/** Server-wide values an admin sets at runtime (the default models), one row a key. */
export const serverSettings = sqliteTable('server_settings', {
  key: text('key').primaryKey(),
  value: text('value', { mode: 'json' }).$type<unknown>().notNull(),
  updatedAt: integer('updated_at').notNull(),
});

export type ConnectionRow = typeof connections.$inferSelect;
export type ModelSettingRow = typeof modelSettings.$inferSelect;
