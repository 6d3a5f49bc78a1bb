import { and, eq, inArray, sql } from 'drizzle-orm';
import type { CreditEntry } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike. Sums are
// read back as numbers (`mapWith`): PostgreSQL's sum of bigint is numeric, which its client gives as text.

/** The bonus balances of several users in one query (a page of the admin's user list); 0 for those without entries. */
export function* bonusBalancesOf({ db, t }: Tx, userIds: string[]): Work<Map<string, number>> {
  const balances = new Map<string, number>(userIds.map((id) => [id, 0]));
  if (!userIds.length) return balances;
  const rows = yield* allRows(db.select({ userId: t.creditLedger.userId, n: microSum(t) }).from(t.creditLedger).where(inArray(t.creditLedger.userId, userIds)).groupBy(t.creditLedger.userId));
  for (const r of rows) balances.set(r.userId, r.n / MICRO);
  return balances;
}

/** Millionths of a credit in one credit: usage's fractions of a credit are kept exactly (`amount_micro`). */
export const MICRO = 1_000_000;

/** The ledger's sum in millionths of a credit: whole credits and usage's fractions, added as integers. */
const microSum = (t: Tx['t']) => sql<number>`coalesce(sum(${t.creditLedger.amount} * ${MICRO} + ${t.creditLedger.amountMicro}), 0)`.mapWith(Number);

/** The bonus balance: the sum of the user's ledger (fractions of a credit that usage spent included). */
export function* bonusBalanceOf(tx: Tx, userId: string): Work<number> {
  return (yield* bonusMicroOf(tx, userId)) / MICRO;
}

/** The same in millionths of a credit, for exact sums (src/usage/). */
export function* bonusMicroOf({ db, t }: Tx, userId: string): Work<number> {
  return (yield* getRow(db.select({ n: microSum(t) }).from(t.creditLedger).where(eq(t.creditLedger.userId, userId))))!.n;
}

/**
 * Spend what usage cost (millionths of a credit) from the user's ledger: one row a user a day,
 * `usage:<user>:<day>`, that grows with each call, so the ledger does not grow a row a call. The
 * caller has checked the balance covers it, under the user's lock (src/usage/).
 */
export function* chargeUsage({ db, t }: Tx, userId: string, day: string, micro: number, now: number): Work<void> {
  if (!Number.isSafeInteger(micro) || micro <= 0) return;
  yield* exec(
    db
      .insert(t.creditLedger)
      .values({ id: `usage:${userId}:${day}`, userId, amount: 0, amountMicro: -micro, reason: 'usage', createdAt: now })
      .onConflictDoUpdate({ target: t.creditLedger.id, set: { amountMicro: sql`${t.creditLedger.amountMicro} - ${micro}` } }),
  );
}

/**
 * The user's row written as it is: a lock on that user's ledger until the transaction ends. On
 * SQLite the write lock already serialises writers; on PostgreSQL this row lock makes a second
 * spend wait and then read the balance after the first.
 */
function* lockUser({ db, t }: Tx, userId: string): Work<void> {
  yield* exec(db.update(t.users).set({ id: sql`${t.users.id}` }).where(eq(t.users.id, userId)));
}

/**
 * Add credits (run with `store.write`): the balance read after the insert is this grant's.
 * With an `adId` that already granted for this user, nothing is written: `granted` is false.
 */
export function* grantCredits(tx: Tx, input: { userId: string; amount: number; reason: string; adId?: string }, now: number): Work<{ granted: boolean; bonusBalance: number }> {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw new RangeError('a grant is a positive integer');
  const { db, t } = tx;
  yield* lockUser(tx, input.userId);
  const row = yield* getRow(
    db
      .insert(t.creditLedger)
      .values({ id: newId(), userId: input.userId, amount: input.amount, reason: input.reason, adId: input.adId ?? null, createdAt: now })
      .onConflictDoNothing()
      .returning({ id: t.creditLedger.id }),
  );
  return { granted: row !== undefined, bonusBalance: yield* bonusBalanceOf(tx, input.userId) };
}

/**
 * Spend credits if the balance covers them (run with `store.write`): the check and the insert
 * share one transaction holding the user's lock, so two spends can never both pass the check and
 * push the balance below zero.
 */
export function* spendCredits(tx: Tx, input: { userId: string; amount: number; reason: string }, now: number): Work<{ spent: boolean; bonusBalance: number }> {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw new RangeError('a spend is a positive integer');
  const { db, t } = tx;
  yield* lockUser(tx, input.userId);
  const balance = yield* bonusBalanceOf(tx, input.userId);
  if (balance < input.amount) return { spent: false, bonusBalance: balance };
  yield* exec(db.insert(t.creditLedger).values({ id: newId(), userId: input.userId, amount: -input.amount, reason: input.reason, createdAt: now }));
  return { spent: true, bonusBalance: balance - input.amount };
}

export function* listLedger({ db, t }: Tx, userId: string): Work<CreditEntry[]> {
  return yield* allRows(db.select().from(t.creditLedger).where(eq(t.creditLedger.userId, userId)).orderBy(t.creditLedger.createdAt, t.creditLedger.id));
}

export function* hasAdGrant({ db, t }: Tx, userId: string, adId: string): Work<boolean> {
  return (yield* getRow(db.select({ id: t.creditLedger.id }).from(t.creditLedger).where(and(eq(t.creditLedger.userId, userId), eq(t.creditLedger.adId, adId))))) !== undefined;
}
