import { DAY_MS } from '../time';

/** A tier's allowances renew each period, in UTC: a day, a week from Monday, or a calendar month. */
export type Period = 'day' | 'week' | 'month';
export const PERIODS: readonly Period[] = ['day', 'week', 'month'];

/** `YYYY-MM-DD` of a time, UTC: the key of `usage_days` and of usage's daily ledger row. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The start of the period that holds `now`, and the start of the next one (when it resets). */
export function periodOf(now: number, period: Period): { start: number; end: number } {
  const d = new Date(now);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (period === 'day') return { start: midnight, end: midnight + DAY_MS };
  if (period === 'week') {
    // getUTCDay: Sunday 0 … Saturday 6; a week starts on Monday.
    const start = midnight - ((d.getUTCDay() + 6) % 7) * DAY_MS;
    return { start, end: start + 7 * DAY_MS };
  }
  return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

/** "a day", "a week", "a month": how a sentence names the period. */
export const perPeriod = (period: Period): string => `a ${period}`;

/** A reset time as people read it: `2025-01-02 00:00 UTC`. */
export const readableTime = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
