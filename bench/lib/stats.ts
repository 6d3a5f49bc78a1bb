/** Small statistics helpers shared by the figures and the client scripts. */

/** The q-th percentile (0–100) of `values`, nearest-rank; NaN when empty. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Round to `digits` decimals, keeping NaN/undefined out of the JSON. */
export function round(n: number | undefined, digits = 2): number | null {
  if (n === undefined || !Number.isFinite(n)) return null;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes on one machine. */
export const nowMs = () => performance.timeOrigin + performance.now();
