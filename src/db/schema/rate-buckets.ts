import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Rate-limit buckets shared by the instances of a cluster (on PostgreSQL; one instance on SQLite
 * keeps its buckets in memory, src/http/rate-limit.ts). `key` is bucket, user and operation;
 * tokens are kept in thousandths so that a refill of part of a token is not lost.
 */
export const rateBuckets = sqliteTable('rate_buckets', {
  key: text('key').primaryKey(),
  milliTokens: integer('milli_tokens').notNull(),
  at: integer('at').notNull(),
});
