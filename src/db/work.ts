import { sql, type SQL } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from './connection';
import type * as schema from './schema';

/**
 * A unit of work that either database can run (docs/architecture.md, "One store interface for
 * two databases"): a generator that yields its queries one at a time and returns its result.
 *
 *   function* addBookmarkItem(tx: Tx, …): Work<BookmarkItem> {
 *     const row = yield* getRow(tx.db.insert(tx.t.bookmarkItems).values({…}).returning());
 *     yield* exec(tx.db.update(tx.t.bookmarkGroups).set({…}).where(…));
 *     return row!;
 *   }
 *
 * The code is written once against drizzle's query builders. SQLite (`sqliteStore`) runs every
 * step synchronously inside one transaction, as the stores always have: nothing else can run on
 * its one connection in between, so no other request's statements land inside the transaction.
 * PostgreSQL (`pgStore`) awaits each step on a pooled connection's transaction. A query that
 * fails is thrown back into the generator at its `yield`, so `try`/`catch` works as usual, with
 * one difference inside `write`: PostgreSQL aborts the whole transaction on an error, so a work
 * that must survive a failed statement checks first (or, when needed, a savepoint step is added
 * here) rather than catching it and writing on.
 */
export type Work<R> = Generator<Step, R, unknown>;

/**
 * One query to run, and what the work wants of it: every row, the first row, or nothing; or
 * `sql`: a raw statement (drizzle's `sql` template) whose rows are wanted, for the few queries
 * that differ by database (a work reads `tx.dialect` to choose).
 */
export interface Step {
  kind: 'all' | 'get' | 'run' | 'count' | 'sql' | 'after';
  query: unknown;
}

/**
 * What a unit of work is given: the database's query builder and its tables. Typed as SQLite's
 * (the one schema); on PostgreSQL they are PostgreSQL's builder and the tables made from the same
 * schema (src/db/pg/schema.ts), with the same names, columns and JavaScript types of values.
 */
export interface Tx {
  db: Db;
  t: typeof schema;
  /** For the few queries written twice (full-text search): which database runs this work. */
  dialect: 'sqlite' | 'pg';
}

export function* allRows<T>(query: { all(): T[] }): Generator<Step, T[], unknown> {
  return (yield { kind: 'all', query }) as T[];
}

export function* getRow<T>(query: { get(): T | undefined }): Generator<Step, T | undefined, unknown> {
  return (yield { kind: 'get', query }) as T | undefined;
}

export function* exec(query: { run(): unknown }): Generator<Step, void, unknown> {
  yield { kind: 'run', query };
}

/**
 * A hot path's query: on SQLite a statement prepared once per connection (src/db/prepared.ts),
 * run right here (the work runs synchronously there, so nothing is yielded); on PostgreSQL the
 * work's builder query. Both must mean the same; the SQLite one is only faster.
 */
export function* hotOr<T>(tx: Tx, sqlite: (db: Db) => T, pg: () => Generator<Step, T, unknown>): Generator<Step, T, unknown> {
  return tx.dialect === 'sqlite' ? sqlite(tx.db) : yield* pg();
}

/** Run a write and return how many rows it changed, without reading them back (a prune of many rows). */
export function* execCount(query: { run(): unknown }): Generator<Step, number, unknown> {
  return (yield { kind: 'count', query }) as number;
}

/** The rows of a raw statement, in the dialect's own SQL (`tx.dialect`); column names as written. */
export function* rawRows<T>(query: SQL): Generator<Step, T[], unknown> {
  return (yield { kind: 'sql', query }) as T[];
}

/** How many rows of `table` match `where` (PostgreSQL's bigint count as a number too). */
export function* countRows({ db }: Tx, table: SQLiteTable, where: SQL | undefined): Work<number> {
  return (yield* getRow(db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(table).where(where)))!.n;
}

/**
 * Queue behind every other transaction serialising on `key`, until this one ends (inside
 * `store.write`): on PostgreSQL a transaction-scoped advisory lock; on SQLite nothing, since its
 * one writer already runs write transactions one at a time. For a rule that reads many rows and
 * writes another ("a server keeps an admin"), where locking the rows read would deadlock.
 */
export function* serializeOn(tx: Tx, key: string): Generator<Step, void, unknown> {
  if (tx.dialect === 'pg') yield* rawRows(sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`);
}

/**
 * Have `fn` run once the work's transaction has committed (right after the work, outside a
 * transaction), and not at all if it rolls back: a side effect other code acts on (forgetting a
 * revoked credential's cache entry, publishing an event) must not be seen before the change is.
 */
export function* afterCommit(fn: () => void): Generator<Step, void, unknown> {
  yield { kind: 'after', query: fn };
}

/** Run a unit of work to its end, each step given to `step`, its failures thrown back into the work. */
export function runSteps<R>(work: Work<R>, step: (s: Step) => unknown, after?: (() => void)[]): R {
  let next = work.next();
  while (!next.done) {
    let value: unknown;
    if (next.value.kind === 'after') {
      if (!after) throw new Error('afterCommit needs a store that runs it (store.read or store.write)');
      after.push(next.value.query as () => void);
      next = work.next(undefined);
      continue;
    }
    try {
      value = step(next.value);
    } catch (err) {
      next = work.throw(err);
      continue;
    }
    next = work.next(value);
  }
  return next.value;
}

/** The same, each step awaited (PostgreSQL). */
export async function runStepsAwaited<R>(work: Work<R>, step: (s: Step) => Promise<unknown>, after: (() => void)[]): Promise<R> {
  let next = work.next();
  while (!next.done) {
    let value: unknown;
    if (next.value.kind === 'after') {
      after.push(next.value.query as () => void);
      next = work.next(undefined);
      continue;
    }
    try {
      value = await step(next.value);
    } catch (err) {
      next = work.throw(err);
      continue;
    }
    next = work.next(value);
  }
  return next.value;
}

/** Run the functions a work left with `afterCommit`, in order, once its transaction has committed. */
export function runAfterCommit(after: (() => void)[]): void {
  for (const fn of after) fn();
}

/** Where the domains run their units of work: SQLite (src/db/store.ts) or PostgreSQL (src/db/pg/store.ts). */
export interface Store {
  /** Which database: the few things that are one database's own (shared limits, the bus) choose by it. */
  readonly dialect: 'sqlite' | 'pg';
  /** Run reads (or a single write that needs no transaction). */
  read<R>(work: (tx: Tx) => Work<R>): Promise<R>;
  /** Run in one write transaction: all of it commits, or none of it. */
  write<R>(work: (tx: Tx) => Work<R>): Promise<R>;
  /**
   * The same, for a hot write many clients make at once (a group message, a response's events):
   * on SQLite it shares one transaction with the other writes queued in this turn of the event
   * loop, inside a savepoint of its own (src/db/commit-queue.ts); on PostgreSQL, whose commits
   * run in parallel on the pool's connections, it is `write`. Its after-commit steps run in queue
   * order right after the shared commit.
   */
  queued<R>(work: (tx: Tx) => Work<R>): Promise<R>;
  /**
   * A number that changes when another connection has committed (another process: the admin
   * CLI), for what keeps rows in memory to notice changes nobody told it of (the credential
   * cache, src/auth/credential-cache.ts). SQLite's `PRAGMA data_version`: one cheap statement.
   * Absent on PostgreSQL, where other instances write all the time: there the cluster bus is to
   * say what changed (`forgetCredentials`, `forgetAllCredentials`).
   */
  dataVersion?(): number;
}
