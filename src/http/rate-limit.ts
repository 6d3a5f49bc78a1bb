import { tooManyRequests } from './errors';

/**
 * Per-user rate limits as token buckets. An operation opts in with one line,
 * `rateLimit: 'ai'`, naming a bucket whose size comes from the config table
 * (`PARLEY_RATE_LIMIT_AI`, ...). Buckets are keyed by user and operation, so a user streaming
 * research does not use up their allowance for sending group messages.
 */

/** Named buckets; each has a config row. Add a name here and a row in src/config.ts. */
export const RATE_LIMIT_BUCKETS = ['ai', 'write'] as const;
export type RateLimitBucket = (typeof RATE_LIMIT_BUCKETS)[number];

/** `capacity` requests at once, refilled at `capacity` per `perMs`. `undefined` means unlimited. */
export interface Rate {
  capacity: number;
  perMs: number;
}

const UNITS: Record<string, number> = { s: 1000, sec: 1000, second: 1000, m: 60_000, min: 60_000, minute: 60_000, h: 3_600_000, hour: 3_600_000 };

/** A rate as an admin writes it (`120/min`), for reports: the inverse of parseRate. */
export function formatRate(rate: Rate): string {
  const unit = rate.perMs === 1000 ? 's' : rate.perMs === 60_000 ? 'min' : rate.perMs === 3_600_000 ? 'hour' : `${rate.perMs}ms`;
  return `${rate.capacity}/${unit}`;
}

/** Parse `30/min`, `5/s`, `200/hour` or `off` (the config table's parser for rate rows). */
export function parseRate(raw: string, name: string): Rate | undefined {
  const v = raw.trim().toLowerCase();
  if (v === 'off' || v === '0' || v === 'unlimited') return undefined;
  const m = /^(\d+)\s*\/\s*([a-z]+)$/.exec(v);
  const perMs = m ? UNITS[m[2]!] : undefined;
  if (!m || !perMs || Number(m[1]) < 1) throw new Error(`${name} must look like 30/min, 5/s or 200/hour (or off), got "${raw}"`);
  return { capacity: Number(m[1]), perMs };
}

interface Bucket {
  tokens: number;
  at: number;
}

export interface RateLimiter {
  /** Take one token for (user, operation) from `bucket`; throws 429 with Retry-After when empty. */
  take(userId: string, operation: string, bucket: RateLimitBucket): void;
  /** Buckets currently held in memory (full buckets are dropped). */
  size(): number;
}

export function createRateLimiter(rates: Record<RateLimitBucket, Rate | undefined>, now: () => number): RateLimiter {
  const buckets = new Map<string, Bucket>();
  let lastSweep = now();

  // Full buckets carry no information; dropping them keeps memory proportional to active users.
  const sweep = (t: number) => {
    if (t - lastSweep < 60_000) return;
    lastSweep = t;
    for (const [key, b] of buckets) {
      const rate = rates[key.slice(0, key.indexOf(':')) as RateLimitBucket];
      if (!rate || b.tokens + ((t - b.at) * rate.capacity) / rate.perMs >= rate.capacity) buckets.delete(key);
    }
  };

  return {
    take(userId, operation, bucket) {
      const rate = rates[bucket];
      if (!rate) return;
      const t = now();
      sweep(t);
      const key = `${bucket}:${userId}:${operation}`;
      const b = buckets.get(key) ?? { tokens: rate.capacity, at: t };
      const refilled = Math.min(rate.capacity, b.tokens + (Math.max(0, t - b.at) * rate.capacity) / rate.perMs);
      if (refilled < 1) {
        buckets.set(key, { tokens: refilled, at: t });
        const waitMs = ((1 - refilled) * rate.perMs) / rate.capacity;
        throw tooManyRequests(waitMs / 1000);
      }
      buckets.set(key, { tokens: refilled - 1, at: t });
    },
    size: () => buckets.size,
  };
}
