import type { Db } from './connection';

/**
 * Statements prepared once per connection. Drizzle prepares (parses and plans) a statement on
 * every call of a query builder; on a hot path that costs more than running it. Wrap the hot
 * queries of a store in `preparedFor` and call them with placeholder values. The cache is keyed
 * by the connection, so each test's fresh database gets its own statements.
 */
export function preparedFor<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    let stmts = cache.get(db);
    if (!stmts) cache.set(db, (stmts = build(db)));
    return stmts;
  };
}
