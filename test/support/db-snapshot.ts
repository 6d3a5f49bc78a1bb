import { sql } from 'drizzle-orm';
import { rawRows, type Store, type Tx, type Work } from '../../src/db/work';

/** Every table of the database (migrations included), so new domains' tables are covered without a change here. */
function* tablesOf(tx: Tx): Work<string[]> {
  const rows = yield* rawRows<{ name: string }>(
    tx.dialect === 'pg'
      ? sql`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`
      : sql`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
  );
  return rows.map((r) => r.name);
}

export const tableNames = (store: Store): Promise<string[]> => store.read(tablesOf);

/** A row as text: 64-bit integers may come back as BigInt, which JSON refuses. */
export const rowText = (row: unknown): string => JSON.stringify(row, (_, v) => (typeof v === 'bigint' ? v.toString() : v));

/**
 * Every row of every table, as one JSON string per table: compare two snapshots to prove a request
 * wrote nothing. The per-user limits' state is left out: a request spends from its rate bucket and
 * holds a stream slot whatever it is answered (the slot is let go just after the answer), and on
 * PostgreSQL those are rows (`rate_buckets`, `stream:` leases, shared by the instances) where
 * SQLite keeps them in memory. `withLimits`: every row of every table.
 */
export function snapshotDb(store: Store, opts: { withLimits?: boolean } = {}): Promise<Record<string, string>> {
  return store.read(function* (tx) {
    const tables = (yield* tablesOf(tx)).filter((t) => opts.withLimits || t !== 'rate_buckets');
    const rowsOf = (t: string) => (t === 'leases' && !opts.withLimits ? sql`SELECT * FROM leases WHERE name NOT LIKE 'stream:%'` : sql`SELECT * FROM ${sql.identifier(t)}`);
    if (tx.dialect === 'pg') {
      // One statement for every table: a round trip each would make the property tests crawl.
      const parts = tables.map((t) => sql`SELECT ${t} AS t, coalesce((SELECT json_agg(x::text ORDER BY x::text) FROM (${rowsOf(t)}) x), '[]')::text AS rows`);
      const rows = yield* rawRows<{ t: string; rows: string }>(sql.join(parts, sql` UNION ALL `));
      return Object.fromEntries(rows.map((r) => [r.t, r.rows]));
    }
    const snapshot: Record<string, string> = {};
    // Rows sorted as text: no ORDER BY rowid, which a WITHOUT ROWID table would refuse.
    for (const t of tables) snapshot[t] = JSON.stringify((yield* rawRows(rowsOf(t))).map(rowText).sort());
    return snapshot;
  });
}
