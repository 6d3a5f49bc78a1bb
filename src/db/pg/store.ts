import type { SQL } from 'bun';
import { drizzle } from 'drizzle-orm/bun-sql';
import type { Db } from '../connection';
import type * as sqliteSchema from '../schema';
import { runStepsAwaited, type Step, type Store, type Tx } from '../work';
import * as pgSchema from './schema';

/** A step on PostgreSQL: the builder awaited; `get` takes the first row. */
const runAwaited = async (s: Step) => {
  const rows = (await (s.query as PromiseLike<unknown[]>)) as unknown[];
  return s.kind === 'get' ? rows[0] : s.kind === 'all' ? rows : undefined;
};

/**
 * The store on PostgreSQL, through drizzle's bun-sql driver on Bun's built-in client. The units
 * of work are the same as on SQLite: their builder and tables are PostgreSQL's (made from the one
 * schema), typed as SQLite's so the work is written once.
 */
export function pgStore(sql: SQL): Store {
  const db = drizzle({ client: sql, schema: pgSchema });
  const txOf = (d: unknown): Tx => ({ db: d as Db, t: pgSchema as unknown as typeof sqliteSchema });
  return {
    read: (work) => runStepsAwaited(work(txOf(db)), runAwaited),
    write: (work) => db.transaction((inTx) => runStepsAwaited(work(txOf(inTx)), runAwaited)),
  };
}
