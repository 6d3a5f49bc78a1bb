import { and, eq, gt, like, sql } from 'drizzle-orm';
import type { AppDeps } from '../deps';
import { tooManyRequests } from './errors';
import { createRateLimiter, type Rate, type RateLimitBucket } from './rate-limit';
import { createSlots } from './limits';
import { exec, getRow, rawRows, serializeOn, type Tx, type Work } from '../db/work';
import { newId } from '../ids';
import { releaseLease, renewLeases } from '../tasks/lease.store';

/**
 * The per-user limits of the operation layer: rate limits (token buckets) and open event streams.
 * On SQLite, one instance serves the database and keeps them in memory (src/http/rate-limit.ts,
 * limits.ts), as fast as a map lookup. On PostgreSQL several instances may serve the same users:
 * the buckets are rows (`rate_buckets`), and each open stream holds a lease `stream:<user>:<id>`
 * that its instance renews, so a user's limits hold across the cluster with the same 429s, and
 * the streams of an instance that died stop counting once their leases expire.
 */
export interface Limits {
  /** Take one token; throws the 429. Synchronous (undefined) when the limits are in memory. */
  take(userId: string, operation: string, bucket: RateLimitBucket): Promise<void> | undefined;
  /** Hold one of the user's stream slots; throws the 429. Returns the release (idempotent). */
  acquireStream(userId: string): Promise<() => void> | (() => void);
}

/** How long an open stream's slot lives without renewal; renewed every STREAM_RENEW_MS. */
export const STREAM_SLOT_MS = 30_000;
const STREAM_RENEW_MS = 10_000;
const STREAM_RETRY_AFTER_S = 5;

export function createLimits(deps: Pick<AppDeps, 'config' | 'now' | 'store' | 'instanceId' | 'lifecycle' | 'log'>): Limits {
  const rates: Record<RateLimitBucket, Rate | undefined> = { ai: deps.config.rateLimitAi, write: deps.config.rateLimitWrite };
  if (deps.store.dialect === 'sqlite') {
    const limiter = createRateLimiter(rates, deps.now);
    const streams = createSlots(deps.config.maxStreamsPerUser, STREAM_RETRY_AFTER_S);
    return {
      take: (userId, operation, bucket) => void limiter.take(userId, operation, bucket),
      acquireStream: (userId) => streams.acquire(userId),
    };
  }
  const { store } = deps;
  const renew = setInterval(
    () => void store.write((tx) => renewLeases(tx, deps.instanceId, 'stream:', STREAM_SLOT_MS, deps.now())).catch((err) => deps.log.warn('stream slots could not be renewed', { cause: String(err) })),
    STREAM_RENEW_MS,
  );
  deps.lifecycle.onShutdown('stream slots', () => clearInterval(renew));
  return {
    async take(userId, operation, bucket) {
      const rate = rates[bucket];
      if (!rate) return;
      const waitMs = await store.write((tx) => takeSharedToken(tx, `${bucket}:${userId}:${operation}`, rate, deps.now()));
      if (waitMs !== undefined) throw tooManyRequests(waitMs / 1000);
    },
    async acquireStream(userId) {
      const max = deps.config.maxStreamsPerUser;
      const name = `stream:${userId}:${newId()}`;
      const ok = await store.write((tx) => takeStreamSlot(tx, userId, name, deps.instanceId, max, deps.now()));
      if (!ok) throw tooManyRequests(STREAM_RETRY_AFTER_S);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        void store.write((tx) => releaseLease(tx, name, deps.instanceId)).catch(() => undefined);
      };
    },
  };
}

/**
 * Take one token of the bucket `key`, refilled at `rate`; the bucket's row is locked for the
 * decision, so instances taking at once queue. Undefined when taken, else the milliseconds until
 * a token is there. A bucket is made full the first time.
 */
export function* takeSharedToken({ db, t }: Tx, key: string, rate: Rate, now: number): Work<number | undefined> {
  const full = rate.capacity * 1000;
  yield* exec(db.insert(t.rateBuckets).values({ key, milliTokens: full, at: now }).onConflictDoNothing());
  const [row] = yield* rawRows<{ milli_tokens: number | string; at: number | string }>(sql`SELECT milli_tokens, at FROM rate_buckets WHERE key = ${key} FOR UPDATE`);
  const milli = Number(row!.milli_tokens);
  // Refilled since `at`, in thousandths of a token times `perMs` (whole numbers: no rounding).
  const gained = Math.max(0, now - Number(row!.at)) * full;
  const refilled = Math.min(full, milli + Math.floor(gained / rate.perMs));
  if (refilled < 1000) {
    // Refused: the row stays as it is, so a client asking again while it waits does not lose the
    // part of a thousandth each write would round away; the wait is exact, as in memory.
    return Math.ceil(((1000 - milli) * rate.perMs - gained) / full);
  }
  yield* exec(db.update(t.rateBuckets).set({ milliTokens: refilled - 1000, at: now }).where(eq(t.rateBuckets.key, key)));
  return undefined;
}

/** Hold a stream slot (lease `name`) when the user holds fewer than `max` live ones; one decision at a time per user. */
export function* takeStreamSlot(tx: Tx, userId: string, name: string, holder: string, max: number, now: number): Work<boolean> {
  const { db, t } = tx;
  yield* serializeOn(tx, `streams:${userId}`);
  if (max > 0) {
    const row = yield* getRow(
      db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(t.leases)
        .where(and(like(t.leases.name, `stream:${userId}:%`), gt(t.leases.expiresAt, now))),
    );
    if ((row?.n ?? 0) >= max) return false;
  }
  yield* exec(db.insert(t.leases).values({ name, holder, acquiredAt: now, expiresAt: now + STREAM_SLOT_MS }));
  return true;
}
