/**
 * Scale-out figure 1: one instance on PostgreSQL against one on SQLite. The write and read of
 * bench/run.ts (figures 1 and 2: `groupChat/sendGroupMessage` and `chat/canWriteConversation` by
 * API key, 32 connections), on two servers started alike, one of them with PARLEY_DATABASE_URL.
 * Alternating rounds (SQLite, PostgreSQL, …), the best of each counts.
 */
import { assertClean, best, fmtInt, fmtMs, loadPoint, type BenchContext } from '../lib/context';
import type { LoadResult, LoadSpec } from '../lib/load';
import { callOperation, startParley } from '../lib/parley';
import type { Row } from '../lib/report';
import { sendGroupMessageSpec } from './write';
import { canWriteSpec, findConversation } from './read';

type Spec = Omit<LoadSpec, 'durationS'>;

export async function storeFigure(ctx: BenchContext, databaseUrl: string): Promise<Row[]> {
  const figure = '1 one instance';
  const sqlite = await startParley(ctx.bin);
  // The CLI that makes the bench user runs with the same settings, so it migrates the database.
  const pg = await startParley(ctx.bin, { PARLEY_DATABASE_URL: databaseUrl });
  try {
    const specs = async (p: typeof sqlite) => {
      const group = await callOperation(p, 'groupChat/createGroupChat', { name: 'Write benchmark' });
      const conversation = await findConversation(p);
      return { write: sendGroupMessageSpec(p, group.id), read: canWriteSpec(p, conversation.id) };
    };
    const s = await specs(sqlite);
    const g = await specs(pg);
    ctx.log('warming up');
    for (const spec of [s.write, g.write, s.read, g.read]) await loadPoint(ctx, { ...spec, durationS: 1 });

    const results: Record<'sw' | 'gw' | 'sr' | 'gr', LoadResult | undefined> = { sw: undefined, gw: undefined, sr: undefined, gr: undefined };
    const points: [keyof typeof results, Spec][] = [
      ['sw', s.write],
      ['gw', g.write],
      ['sr', s.read],
      ['gr', g.read],
    ];
    for (let round = 0; round < ctx.rounds; round++) {
      ctx.log(`round ${round + 1}/${ctx.rounds}: write SQLite, PostgreSQL; read SQLite, PostgreSQL`);
      for (const [k, spec] of points) results[k] = best(results[k], await loadPoint(ctx, spec));
    }
    for (const [k] of points) assertClean(k, results[k]!);
    ctx.raw.store = results;
    const row = (measure: string, pgR: LoadResult, sqliteR: LoadResult): Row => ({
      figure,
      measure,
      parley: `${fmtInt(pgR.rps)} req/s`,
      baseline: `${fmtInt(sqliteR.rps)} req/s`,
      ratio: pgR.rps / sqliteR.rps,
      target: 'reported',
      detail: `p99 ${fmtMs(pgR.p99Ms)} on PostgreSQL, ${fmtMs(sqliteR.p99Ms)} on SQLite (×${(pgR.p99Ms / sqliteR.p99Ms).toFixed(1)}); p50 ${fmtMs(pgR.p50Ms)} / ${fmtMs(sqliteR.p50Ms)}`,
    });
    return [
      row('sendGroupMessage, 32 conn: PostgreSQL vs SQLite', results.gw!, results.sw!),
      row('canWriteConversation, 32 conn: PostgreSQL vs SQLite', results.gr!, results.sr!),
    ];
  } finally {
    await Promise.all([sqlite.stop(), pg.stop()]);
  }
}
