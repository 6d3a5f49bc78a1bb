import { tooManyRequests } from './errors';

/**
 * Per-user counters of things that stay open: event streams now, and anything else with a
 * per-user cap (e.g. concurrent research tasks). `acquire` throws 429 when the user is at the cap
 * and otherwise returns an idempotent release function: call it from `finally`, from an abort
 * listener, or both.
 */
export interface Slots {
  acquire(userId: string): () => void;
  count(userId: string): number;
  total(): number;
}

export function createSlots(maxPerUser: number, retryAfterSeconds = 5): Slots {
  const open = new Map<string, number>();
  return {
    acquire(userId) {
      const n = open.get(userId) ?? 0;
      if (maxPerUser > 0 && n >= maxPerUser) throw tooManyRequests(retryAfterSeconds);
      open.set(userId, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(userId) ?? 1) - 1;
        // Delete at zero so the map holds only users with something open.
        if (left <= 0) open.delete(userId);
        else open.set(userId, left);
      };
    },
    count: (userId) => open.get(userId) ?? 0,
    total: () => [...open.values()].reduce((a, b) => a + b, 0),
  };
}
