/** Durations in milliseconds, for config values given in hours or days. */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
