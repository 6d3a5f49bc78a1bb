/** What every figure gets from bench/run.ts, and small helpers the load figures share. */
import type { LoadResult, LoadSpec, LoadTool } from './load';
import { runLoad } from './load';
import type { Row } from './report';

export interface BenchContext {
  root: string;
  benchDir: string;
  /** The compiled server under test. */
  bin: string;
  quick: boolean;
  loadTool: LoadTool;
  /** Seconds per load point and the number of alternating rounds (the best round counts). */
  loadSeconds: number;
  rounds: number;
  /** Raw numbers for latest.json, keyed by figure id. */
  raw: Record<string, unknown>;
  log(msg: string): void;
}

export interface Figure {
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<Row[]>;
}

/** One load point at the context's duration. */
export function loadPoint(ctx: BenchContext, spec: Omit<LoadSpec, 'durationS'> & { durationS?: number }): Promise<LoadResult> {
  return runLoad(ctx.loadTool, { durationS: ctx.loadSeconds, ...spec }, ctx.benchDir);
}

/** The better of two rounds: on a shared machine the best round is the least disturbed one. */
export const best = (a: LoadResult | undefined, b: LoadResult): LoadResult => (!a || b.rps > a.rps ? b : a);

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
export const fmtMs = (n: number | null | undefined) => (n == null || !Number.isFinite(n) ? '?' : n < 10 ? `${n.toFixed(2)} ms` : `${n.toFixed(1)} ms`);
export const fmtMB = (n: number) => `${n.toFixed(1)} MB`;

/** "p50 1.80 ms, p99 12.3 ms" plus any error counts, which make a load point suspect. */
export function latencyDetail(r: LoadResult): string {
  const errs = r.errors + r.non2xx ? `, ${r.non2xx} non-2xx, ${r.errors} socket errors` : '';
  return `p50 ${fmtMs(r.p50Ms)}, p99 ${fmtMs(r.p99Ms)}${errs}`;
}

/** A load point is only a figure when (nearly) every answer was a success. */
export function assertClean(name: string, r: LoadResult): void {
  if (r.requests === 0 || (r.non2xx + r.errors) / r.requests > 0.01)
    throw new Error(`${name}: ${r.non2xx} non-2xx and ${r.errors} errors in ${r.requests} requests`);
}

export function ratioRow(row: Omit<Row, 'ratio' | 'met'>, ratio: number, min: number): Row {
  return { ...row, ratio, met: ratio >= min };
}
