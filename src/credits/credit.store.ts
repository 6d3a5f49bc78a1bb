import { and, eq, inArray, sql } from 'drizzle-orm';
import { writeTx, type Db } from '../db/connection';
import { creditLedger, type CreditEntry } from '../db/schema';
import { newId } from '../ids';

/** The bonus balance: the sum of the user's ledger. */
/** The bonus balances of several users in one query (a page of the admin's user list); 0 for those without entries. */
export function bonusBalancesOf(db: Db, userIds: string[]): Map<string, number> {
  const balances = new Map<string, number>(userIds.map((id) => [id, 0]));
  if (!userIds.length) return balances;
  const rows = db
    .select({ userId: creditLedger.userId, n: sql<number>`coalesce(sum(${creditLedger.amount}), 0)` })
    .from(creditLedger)
    .where(inArray(creditLedger.userId, userIds))
    .groupBy(creditLedger.userId)
    .all();
  for (const r of rows) balances.set(r.userId, r.n);
  return balances;
}

export function bonusBalanceOf(db: Db, userId: string): number {
  return db
    .select({ n: sql<number>`coalesce(sum(${creditLedger.amount}), 0)` })
    .from(creditLedger)
    .where(eq(creditLedger.userId, userId))
    .get()!.n;
}

/**
 * Add credits. Inside BEGIN IMMEDIATE, so the balance read after the insert is this grant's and
 * no concurrent writer can interleave (on this connection or another process's).
 * With an `adId` that already granted for this user, nothing is written: `granted` is false.
 */
export function grantCredits(
  db: Db,
  input: { userId: string; amount: number; reason: string; adId?: string },
  now = Date.now(),
): { granted: boolean; bonusBalance: number } {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw new RangeError('a grant is a positive integer');
  return writeTx(db, (tx) => {
    const row = tx
      .insert(creditLedger)
      .values({ id: newId(), userId: input.userId, amount: input.amount, reason: input.reason, adId: input.adId ?? null, createdAt: now })
      .onConflictDoNothing()
      .returning({ id: creditLedger.id })
      .get();
    return { granted: row !== undefined, bonusBalance: bonusBalanceOf(tx, input.userId) };
  });
}

/**
 * Spend credits if the balance covers them: the check and the insert share one write
 * transaction, so two spends can never both pass the check and push the balance below zero.
 */
export function spendCredits(
  db: Db,
  input: { userId: string; amount: number; reason: string },
  now = Date.now(),
): { spent: boolean; bonusBalance: number } {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw new RangeError('a spend is a positive integer');
  return writeTx(db, (tx) => {
    const balance = bonusBalanceOf(tx, input.userId);
    if (balance < input.amount) return { spent: false, bonusBalance: balance };
    tx.insert(creditLedger).values({ id: newId(), userId: input.userId, amount: -input.amount, reason: input.reason, createdAt: now }).run();
    return { spent: true, bonusBalance: balance - input.amount };
  });
}

export const listLedger = (db: Db, userId: string): CreditEntry[] =>
  db.select().from(creditLedger).where(eq(creditLedger.userId, userId)).orderBy(creditLedger.createdAt, creditLedger.id).all();

export const hasAdGrant = (db: Db, userId: string, adId: string): boolean =>
  db.select({ id: creditLedger.id }).from(creditLedger).where(and(eq(creditLedger.userId, userId), eq(creditLedger.adId, adId))).get() !== undefined;
