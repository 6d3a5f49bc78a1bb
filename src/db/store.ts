import { writeTx, type Db } from './connection';
import * as schema from './schema';
import type { SQL } from 'drizzle-orm';
import { queuedWrite } from './commit-queue';
import { runAfterCommit, runSteps, type Step, type Store, type Tx, type Work } from './work';

type SyncQuery = { all(): unknown[]; get(): unknown; run(): unknown };

/** Steps on SQLite: drizzle's synchronous `.all()`, `.get()` or `.run()`; raw SQL through `db.all`. */
const runNow = (db: Db) => (s: Step) => {
  if (s.kind === 'sql') return db.all(s.query as SQL);
  const q = s.query as SyncQuery;
  if (s.kind === 'count') return (q.run() as { changes: number }).changes;
  return s.kind === 'all' ? q.all() : s.kind === 'get' ? q.get() : q.run();
};

const txOn = (db: Db): Tx => ({ db, t: schema, dialect: 'sqlite' });

/** Run `work` on `db` now; in one write transaction when `write`; its after-commit steps once that committed. */
function runNowOn<R>(db: Db, work: (tx: Tx) => Work<R>, write: boolean): R {
  const after: (() => void)[] = [];
  const result = write ? writeTx(db, (inTx) => runSteps(work(txOn(inTx)), runNow(inTx), after)) : runSteps(work(txOn(db)), runNow(db), after);
  runAfterCommit(after);
  return result;
}

/**
 * The store on the embedded SQLite database. A unit of work runs whole and synchronously (a
 * write inside a `BEGIN IMMEDIATE` transaction), exactly as the stores' plain functions do; the
 * promise only gives the domains the interface PostgreSQL needs.
 */
export function sqliteStore(db: Db): Store {
  // Prepared on first use: only the credential cache asks (src/auth/credential-cache.ts).
  let dataVersion: { get(): { data_version: number } | null } | undefined;
  return {
    dialect: 'sqlite',
    read: async (work) => runNowOn(db, work, false),
    write: async (work) => runNowOn(db, work, true),
    queued: (work) =>
      queuedWrite(
        db,
        () => {
          const after: (() => void)[] = [];
          return { result: runSteps(work(txOn(db)), runNow(db), after), after };
        },
        (done) => runAfterCommit(done.after),
      ).then((done) => done.result),
    dataVersion: () => (dataVersion ??= db.$client.prepare<{ data_version: number }, []>('PRAGMA data_version')).get()!.data_version,
  };
}

/** Run a unit of work on SQLite now, synchronously (tests' set-up; the domains go through a Store). */
export const runOnSqlite = <R>(db: Db, work: (tx: Tx) => Work<R>): R => runNowOn(db, work, false);

/** The same in one write transaction, as `store.write` runs it. */
export const writeOnSqlite = <R>(db: Db, work: (tx: Tx) => Work<R>): R => runNowOn(db, work, true);
