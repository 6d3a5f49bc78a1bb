import type { SQL as BunSQL } from 'bun';
import type { SQL } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/bun-sql';
import type { Db } from '../connection';
import type * as sqliteSchema from '../schema';
import { runAfterCommit, runStepsAwaited, type Step, type Store, type Tx } from '../work';
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
    queued: (work) => store.write(work),
  };
  return store;
}
