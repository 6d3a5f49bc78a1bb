import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * One-time setup links (src/setup/): while the server has no admin, `parley serve` (and
 * `parley setup-link`) makes one and prints it to the console; opening it creates the first
 * admin. Only the hash of the link's secret is stored, as for login links; using it stamps
 * `usedAt`, so it works once. Rows live in the database, so on PostgreSQL a link printed by one
 * instance works on any other.
 */
export const setupTokens = sqliteTable('setup_tokens', {
  id: text('id').primaryKey(),
  /** SHA-256 of the link's token, hex. */
  hash: text('hash').notNull().unique(),
  createdAt: integer('created_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
  usedAt: integer('used_at'),
});

export type SetupToken = typeof setupTokens.$inferSelect;
