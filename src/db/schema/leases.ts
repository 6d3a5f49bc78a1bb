import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Leases: work that one instance of a cluster does at a time (the hourly retention pass; later the
 * AI turns an instance owns). A lease is held by `holder` (an instance's id) until `expires_at`;
 * the holder renews it while it works, and anyone may take it once it has expired
 * (src/tasks/lease.store.ts).
 */
export const leases = sqliteTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  acquiredAt: integer('acquired_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
});

export type Lease = typeof leases.$inferSelect;
