import { writeTx, type Db } from './connection';
import * as schema from './schema';
import { runSteps, type Step, type Store, type Tx, type Work } from './work';

type SyncQuery = { all(): unknown[]; get(): unknown; run(): unknown };

/** A step on SQLite: drizzle's synchronous `.all()`, `.get()` or `.run()`. */
const runNow = (s: Step) => {
  const q = s.query as SyncQuery;
  return s.kind === 'all' ? q.all() : s.kind === 'get' ? q.get() : q.run();
};

/**
 * The store on the embedded SQLite database. A unit of work runs whole and synchronously (a
 * write inside a `BEGIN IMMEDIATE` transaction), exactly as the stores' plain functions do; the
 * promise only gives the domains the interface PostgreSQL needs.
 */
export function sqliteStore(db: Db): Store {
  const tx: Tx = { db, t: schema };
  return {
    read: async (work) => runSteps(work(tx), runNow),
    write: async (work) => writeTx(db, (inTx) => runSteps(work({ db: inTx, t: schema }), runNow)),
  };
}

/** Run a unit of work on SQLite now, synchronously (tests' set-up; the domains go through a Store). */
export const runOnSqlite = <R>(db: Db, work: (tx: Tx) => Work<R>): R => runSteps(work({ db, t: schema }), runNow);

/** The same in one write transaction, as `store.write` runs it. */
export const writeOnSqlite = <R>(db: Db, work: (tx: Tx) => Work<R>): R => writeTx(db, (inTx) => runSteps(work({ db: inTx, t: schema }), runNow));
