import { sql } from 'drizzle-orm';
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users';

/**
 * The bonus-credit ledger: one row per grant (amount > 0) or spend (amount < 0). The balance is
 * the sum (of `amount` and `amount_micro` / 1,000,000); nothing else stores it, so it can never drift from its history. `adId` is set for
 * rewarded-ad grants, and unique per user so a replayed ad grants nothing.
 */
export const creditLedger = sqliteTable(
  'credit_ledger',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    amount: integer('amount').notNull(),
    /**
     * Millionths of a credit, added to `amount`: what usage costs (docs/usage.md), a fraction of a
     * credit a call. Usage's spends are one row a user a day (`usage:<user>:<day>`), growing.
     */
    amountMicro: integer('amount_micro').notNull().default(0),
    reason: text('reason').notNull(),
    adId: text('ad_id'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('credit_ledger_user_idx').on(t.userId, t.createdAt),
    uniqueIndex('credit_ledger_ad_idx').on(t.userId, t.adId).where(sql`${t.adId} IS NOT NULL`),
  ],
);

export type CreditEntry = typeof creditLedger.$inferSelect;
