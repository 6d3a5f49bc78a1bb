import type { Db } from './connection';

/**
 * One prepared statement per database, built on first use. Drizzle builds the SQL of a query on
 * every call (a few hundred microseconds, more than the query itself); a prepared statement with
 * `sql.placeholder(...)` skips that. Use it for queries on the per-request hot path
 * (authentication, membership checks); bench/RESULTS.md shows the difference.
 */
export function prepared<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    let statement = cache.get(db);
    if (!statement) cache.set(db, (statement = build(db)));
    return statement;
  };
}
