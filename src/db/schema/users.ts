import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';

/** Timestamps are stored as integer milliseconds since the epoch and shown as ISO 8601 UTC. */
export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  email: text('email').notNull().unique(),
  name: text('name').notNull().default(''),
  image: text('image').notNull().default(''),
  accountType: text('account_type').notNull().default('GENERAL'),
  isLocked: integer('is_locked', { mode: 'boolean' }).notNull().default(false),
  subscriptionTier: text('subscription_tier').notNull().default('FREE'),
  subscriptionActive: integer('subscription_active', { mode: 'boolean' }).notNull().default(false),
  subscriptionExpiresAt: integer('subscription_expires_at'),
  subscriptionProductId: text('subscription_product_id'),
  subscriptionUpdatedAt: integer('subscription_updated_at').notNull(),
  enableMemories: integer('enable_memories', { mode: 'boolean' }).notNull().default(false),
  showMemoryToolOutput: integer('show_memory_tool_output', { mode: 'boolean' }).notNull().default(false),
  /** May use the admin operations (src/admin/) and the web app's /admin page; set with `parley user set --admin`. */
  isAdmin: integer('is_admin', { mode: 'boolean' }).notNull().default(false),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** The first characters of the key, shown so a user can tell keys apart. */
    prefix: text('prefix').notNull(),
    /** SHA-256 of the key, hex. The key itself is shown once and never stored. */
    hash: text('hash').notNull().unique(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('api_keys_user_idx').on(t.userId)],
);

export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** SHA-256 of the bearer token, hex. */
    hash: text('hash').notNull().unique(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    revokedAt: integer('revoked_at'),
    userAgent: text('user_agent'),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

export type User = typeof users.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type Session = typeof sessions.$inferSelect;

/**
 * One-time sign-in links made by an admin with `parley login-link` (docs/web.md). Only the hash
 * of the link's secret is stored; redeeming it stamps `usedAt`, so it works once.
 */
export const loginLinks = sqliteTable(
  'login_links',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** SHA-256 of the link's token, hex. */
    hash: text('hash').notNull().unique(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [index('login_links_user_idx').on(t.userId)],
);

export type LoginLink = typeof loginLinks.$inferSelect;
