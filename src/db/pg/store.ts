import type { SQL as BunSQL } from 'bun';
import type { SQL } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/bun-sql';
import type { Db } from '../connection';
import type * as sqliteSchema from '../schema';
import { settleBatch, type Outcome } from '../commit-queue';
import { runAfterCommit, runStepsAwaited, type Step, type Store, type Tx, type Work } from '../work';
import * as pgSchema from './schema';

type PgDb = ReturnType<typeof drizzle<typeof pgSchema>>;

/** Steps on PostgreSQL: the builder awaited (`get` takes the first row); raw SQL through `db.execute`. */
const runAwaited = (db: PgDb) => async (s: Step) => {
  if (s.kind === 'sql') return [...((await db.execute(s.query as SQL)) as unknown as unknown[])];
  const rows = (await (s.query as PromiseLike<unknown[]>)) as unknown[];
  // Bun's client answers a statement without RETURNING with an empty array that carries `count`.
  if (s.kind === 'count') return (rows as unknown as { count?: number }).count ?? rows.length;
  return s.kind === 'get' ? rows[0] : s.kind === 'all' ? rows : undefined;
};

/**
 * The store on PostgreSQL, through drizzle's bun-sql driver on Bun's built-in client. The units
 * of work are the same as on SQLite: their builder and tables are PostgreSQL's (made from the one
 * schema), typed as SQLite's so the work is written once.
 */
export function pgStore(sql: BunSQL): Store {
  const db = drizzle({ client: sql, schema: pgSchema });
  const txOf = (d: PgDb): Tx => ({ db: d as unknown as Db, t: pgSchema as unknown as typeof sqliteSchema, dialect: 'pg' });
  const store: Store = {
    dialect: 'pg',
    async read(work) {
      const after: (() => void)[] = [];
      const result = await runStepsAwaited(work(txOf(db)), runAwaited(db), after);
      runAfterCommit(after);
      return result;
    },
    async write(work) {
      const after: (() => void)[] = [];
      const result = await db.transaction((inTx) => runStepsAwaited(work(txOf(inTx as unknown as PgDb)), runAwaited(inTx as unknown as PgDb), after));
      runAfterCommit(after);
      return result;
    },
    queued: <R>(work: (tx: Tx) => Work<R>) =>
      new Promise<R>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
        if (queue.length === 1) setImmediate(flush);
      }),
  };

  /*
   * Group commit, as on SQLite (src/db/commit-queue.ts): the units queued in one turn of the
   * event loop share one transaction, each in a savepoint of its own (drizzle's nested
   * transaction), so a burst of messages to one group costs one commit and takes the group's row
   * lock once, instead of queueing each transaction behind the last one's commit. A unit that
   * fails rolls back alone; a batch whose commit fails fails every unit (none was answered). The
   * next batch starts while this one runs, on another connection of the pool.
   */
  type Job = { work: (tx: Tx) => Work<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void };
  const queue: Job[] = [];
  const flush = async () => {
    const batch = queue.splice(0, MAX_BATCH);
    if (queue.length) setImmediate(flush);
    const outcomes: Outcome[] = [];
    const afters: (() => void)[][] = [];
    try {
      await db.transaction(async (tx) => {
        for (const job of batch) {
          const after: (() => void)[] = [];
          afters.push(after);
          try {
            const value = await tx.transaction((inner) => runStepsAwaited(job.work(txOf(inner as unknown as PgDb)), runAwaited(inner as unknown as PgDb), after));
            outcomes.push({ ok: true, value });
          } catch (err) {
            outcomes.push({ ok: false, err });
          }
        }
      });
    } catch (err) {
      for (const job of batch) job.reject(err);
      return;
    }
    settleBatch(batch, outcomes, (_, i) => runAfterCommit(afters[i]!));
  };
  return store;
}

/** Units in one group commit at most (as on SQLite). */
const MAX_BATCH = 256;
