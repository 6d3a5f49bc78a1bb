import { and, desc, eq, gt, gte, inArray, lt, ne, sql, type SQL } from 'drizzle-orm';
import type { UsagePriceRow, UsageRecord, UsageReservationRow, UsageTierRow } from '../db/schema';
import { allRows, exec, execCount, getRow, type Tx, type Work } from '../db/work';
import { DAY_MS } from '../time';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike. The rules
// (who may spend what) are src/usage/metering.ts's; these only read and write the rows.

export type NewUsageRecord = Omit<UsageRecord, 'id'> & { id: string };

export function* insertUsageRecord({ db, t }: Tx, row: NewUsageRecord): Work<void> {
  yield* exec(db.insert(t.usageRecords).values(row));
}

/** Add to a user's day (tokens of the token kinds, research runs begun, images made). */
export function* addToDay({ db, t }: Tx, userId: string, day: string, add: { tokens: number; researchRuns: number; images: number }): Work<void> {
  if (!add.tokens && !add.researchRuns && !add.images) return;
  const d = t.usageDays;
  yield* exec(
    db
      .insert(d)
      .values({ userId, day, ...add })
      .onConflictDoUpdate({
        target: [d.userId, d.day],
        set: { tokens: sql`${d.tokens} + ${add.tokens}`, researchRuns: sql`${d.researchRuns} + ${add.researchRuns}`, images: sql`${d.images} + ${add.images}` },
      }),
  );
}

const num = (c: SQL | unknown) => sql<number>`coalesce(sum(${c}), 0)`.mapWith(Number);

/** What a user used from `fromDay` (a period's first day) on. */
export function* usedSince({ db, t }: Tx, userId: string, fromDay: string): Work<{ tokens: number; researchRuns: number; images: number }> {
  const d = t.usageDays;
  return (yield* getRow(
    db
      .select({ tokens: num(d.tokens), researchRuns: num(d.researchRuns), images: num(d.images) })
      .from(d)
      .where(and(eq(d.userId, userId), gte(d.day, fromDay))),
  ))!;
}

/** What the user's live reservations hold, but `exceptId`'s. */
export function* heldBy({ db, t }: Tx, userId: string, now: number, exceptId?: string): Work<{ tokens: number; images: number; creditsMicro: number }> {
  const r = t.usageReservations;
  const live = and(eq(r.userId, userId), gt(r.expiresAt, now), exceptId ? ne(r.id, exceptId) : undefined);
  return (yield* getRow(db.select({ tokens: num(r.tokens), images: num(r.images), creditsMicro: num(r.creditsMicro) }).from(r).where(live)))!;
}

export function* insertReservation({ db, t }: Tx, row: UsageReservationRow): Work<void> {
  yield* exec(db.insert(t.usageReservations).values(row));
}

export function* findReservation({ db, t }: Tx, id: string): Work<UsageReservationRow | undefined> {
  return yield* getRow(db.select().from(t.usageReservations).where(eq(t.usageReservations.id, id)));
}

export function* setReservationHeld({ db, t }: Tx, id: string, held: { tokens: number; images: number; creditsMicro: number }): Work<void> {
  yield* exec(db.update(t.usageReservations).set(held).where(eq(t.usageReservations.id, id)));
}

export function* deleteReservation({ db, t }: Tx, id: string): Work<void> {
  yield* exec(db.delete(t.usageReservations).where(eq(t.usageReservations.id, id)));
}

/**
 * Retention: reservations expired (their calls' crashes), calls recorded before `before`, and the
 * daily sums of allowances before `daysBefore` (kept longer: a month's allowance reads its days).
 */
export function* pruneUsage({ db, t }: Tx, now: number, before: number, daysBefore: number): Work<{ reservations: number; usage: number }> {
  const reservations = yield* execCount(db.delete(t.usageReservations).where(lt(t.usageReservations.expiresAt, now)));
  const usage = yield* execCount(db.delete(t.usageRecords).where(lt(t.usageRecords.createdAt, before)));
  yield* exec(db.delete(t.usageDays).where(lt(t.usageDays.day, new Date(daysBefore).toISOString().slice(0, 10))));
  return { reservations, usage };
}

// --- tiers and prices (admins' settings, kept in memory by the metering service) ---

export function* listTiers({ db, t }: Tx): Work<UsageTierRow[]> {
  return yield* allRows(db.select().from(t.usageTiers).orderBy(t.usageTiers.name));
}

export function* saveTier({ db, t }: Tx, row: UsageTierRow): Work<void> {
  const { name, ...rest } = row;
  yield* exec(db.insert(t.usageTiers).values(row).onConflictDoUpdate({ target: t.usageTiers.name, set: rest }));
}

export function* deleteTier({ db, t }: Tx, name: string): Work<boolean> {
  return (yield* execCount(db.delete(t.usageTiers).where(eq(t.usageTiers.name, name)))) > 0;
}

export function* listPrices({ db, t }: Tx): Work<UsagePriceRow[]> {
  return yield* allRows(db.select().from(t.usagePrices).orderBy(t.usagePrices.model));
}

export function* savePrice({ db, t }: Tx, row: UsagePriceRow): Work<void> {
  const { model, ...rest } = row;
  yield* exec(db.insert(t.usagePrices).values(row).onConflictDoUpdate({ target: t.usagePrices.model, set: rest }));
}

export function* deletePrice({ db, t }: Tx, model: string): Work<boolean> {
  return (yield* execCount(db.delete(t.usagePrices).where(eq(t.usagePrices.model, model)))) > 0;
}

// --- reading usage back ---

export type UsageGrouping = 'day' | 'model' | 'key' | 'kind' | 'user';

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  units: number;
  creditsMicro: number;
  calls: number;
  estimatedCalls: number;
}

export type UsageGroup = UsageTotals & { key: string | null; label: string | null };

/**
 * Usage summed by one key over [since, until): a user's own (`userId`), or everyone's. `key` is
 * the day (`YYYY-MM-DD`), the model, the API key's id (null: calls made without one), the kind
 * or the user's id; `label` names it for people (the key's name, the user's e-mail).
 */
export function* sumUsage({ db, t }: Tx, q: { userId?: string; since: number; until: number; by: UsageGrouping }): Work<UsageGroup[]> {
  const u = t.usageRecords;
  // Integer division by a day gives the same day on both databases (milliseconds since the epoch, UTC).
  const day = sql<number>`${u.createdAt} / ${sql.raw(String(DAY_MS))}`;
  const column = { day, model: u.model, key: u.apiKeyId, kind: u.kind, user: u.userId }[q.by];
  const rows = yield* allRows(
    db
      .select({
        key: sql<string | number | null>`${column}`,
        inputTokens: num(u.inputTokens),
        outputTokens: num(u.outputTokens),
        cachedTokens: num(u.cachedTokens),
        reasoningTokens: num(u.reasoningTokens),
        units: num(u.units),
        creditsMicro: num(u.creditsMicro),
        calls: sql<number>`count(*)`.mapWith(Number),
        estimatedCalls: num(sql`case when ${u.estimated} then 1 else 0 end`),
      })
      .from(u)
      .where(and(q.userId ? eq(u.userId, q.userId) : undefined, gte(u.createdAt, q.since), lt(u.createdAt, q.until)))
      .groupBy(column)
      .orderBy(column),
  );
  const groups = rows.map((r) => ({ ...r, key: r.key === null ? null : q.by === 'day' ? new Date(Number(r.key) * DAY_MS).toISOString().slice(0, 10) : String(r.key), label: null as string | null }));
  const ids = groups.flatMap((g) => (g.key ? [g.key] : []));
  if (q.by === 'key' && ids.length) {
    const keys = yield* allRows(db.select({ id: t.apiKeys.id, name: t.apiKeys.name, prefix: t.apiKeys.prefix }).from(t.apiKeys).where(inArray(t.apiKeys.id, ids)));
    for (const g of groups) {
      const k = keys.find((x) => x.id === g.key);
      g.label = k ? `${k.name} (${k.prefix}…)` : null;
    }
  }
  if (q.by === 'user' && ids.length) {
    const users = yield* allRows(db.select({ id: t.users.id, email: t.users.email }).from(t.users).where(inArray(t.users.id, ids)));
    for (const g of groups) g.label = users.find((x) => x.id === g.key)?.email ?? null;
  }
  return groups;
}

/** A user's calls, newest first, a page before `before` (a record's id; ids sort by time). */
export function* listUsageRecords({ db, t }: Tx, userId: string, opts: { before?: string; limit: number; responseId?: string }): Work<UsageRecord[]> {
  const u = t.usageRecords;
  return yield* allRows(
    db
      .select()
      .from(u)
      .where(and(eq(u.userId, userId), opts.before ? lt(u.id, opts.before) : undefined, opts.responseId ? eq(u.responseId, opts.responseId) : undefined))
      .orderBy(desc(u.id))
      .limit(opts.limit),
  );
}
