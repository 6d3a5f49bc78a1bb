import { writeTx, type Db } from './connection';
import * as schema from './schema';
import type { SQL } from 'drizzle-orm';
import { runSteps, type Step, type Store, type Tx, type Work } from './work';

type SyncQuery = { all(): unknown[]; get(): unknown; run(): unknown };

/** Steps on SQLite: drizzle's synchronous `.all()`, `.get()` or `.run()`; raw SQL through `db.all`. */
const runNow = (db: Db) => (s: Step) => {
  if (s.kind === 'sql') return db.all(s.query as SQL);
  const q = s.query as SyncQuery;
  return s.kind === 'all' ? q.all() : s.kind === 'get' ? q.get() : q.run();
};

const txOn = (db: Db): Tx => ({ db, t: schema, dialect: 'sqlite' });

/**
 * The store on the embedded SQLite database. A unit of work runs whole and synchronously (a
 * write inside a `BEGIN IMMEDIATE` transaction), exactly as the stores' plain functions do; the
 * promise only gives the domains the interface PostgreSQL needs.
 */
export function sqliteStore(db: Db): Store {
  return {
    read: async (work) => runSteps(work(txOn(db)), runNow(db)),
    write: async (work) => writeTx(db, (inTx) => runSteps(work(txOn(inTx)), runNow(inTx))),
  };
}

/** Run a unit of work on SQLite now, synchronously (tests' set-up; the domains go through a Store). */
export const runOnSqlite = <R>(db: Db, work: (tx: Tx) => Work<R>): R => runSteps(work(txOn(db)), runNow(db));

/** The same in one write transaction, as `store.write` runs it. */
export const writeOnSqlite = <R>(db: Db, work: (tx: Tx) => Work<R>): R => writeTx(db, (inTx) => runSteps(work(txOn(inTx)), runNow(inTx)));
