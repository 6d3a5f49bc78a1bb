import type { Db } from './connection';

/**
 * Statements prepared once per connection. Drizzle prepares (parses and plans) a statement on
 * every call of a query builder; on a hot path that costs more than running it. Wrap the hot
 * queries of a store in `preparedFor` and call them with placeholder values. The cache is keyed
 * by the connection, so each test's fresh database gets its own statements, and a transaction on
 * it the same ones.
 */
export function preparedFor<T>(build: (db: Db) => T): (db: Db) => T {
  // Keyed by the SQLite connection: a transaction (writeTx) shares its database's statements.
  const cache = new WeakMap<object, T>();
  return (db) => {
    const key = db.$client ?? db;
    let stmts = cache.get(key);
    if (!stmts) cache.set(key, (stmts = build(db)));
    return stmts;
  };
}
