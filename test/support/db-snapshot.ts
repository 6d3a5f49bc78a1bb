import type { Db } from '../../src/db/connection';

/** Every table of the database (migrations included), so new domains' tables are covered without a change here. */
export function tableNames(db: Db): string[] {
  return db.$client
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .map((r) => r.name);
}

/** Every row of every table, as one JSON string per table: compare two snapshots to prove a request wrote nothing. */
export function snapshotDb(db: Db): Record<string, string> {
  // Rows sorted as text: no ORDER BY rowid, which a WITHOUT ROWID table would refuse.
  return Object.fromEntries(
    tableNames(db).map((t) => [t, JSON.stringify(db.$client.query(`SELECT * FROM "${t}"`).all().map((r) => JSON.stringify(r)).sort())]),
  );
}

export function rowCounts(db: Db): Record<string, number> {
  return Object.fromEntries(tableNames(db).map((t) => [t, (db.$client.query(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n]));
}
