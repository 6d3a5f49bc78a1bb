import { Database } from 'bun:sqlite';
import type { SQL } from 'bun';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DB_FILE } from '../connection';
import { findOrphanWal, verifyDatabaseFile } from '../inspect-database';
import { migrate, pendingMigrations, unknownMigrations } from '../migrate';
import { partialName, placeNewFile, removePartial, removeStalePartials } from '../partial-file';
import { MIN_PG_VERSION, pgVersion } from '../pg/connect';
import { migratePg, pgMigrationState } from '../pg/migrate';
import { countSql, pgInsert, pgPages, sqliteInsert, sqlitePages } from './read-pages';
import { findNul, pgToSqlite, sqliteToPg, TableDigest } from './row-values';
import { tablePlan, type TablePlan } from './table-plan';

/** Why a copy was refused or failed: one line for the admin, saying what to do. */
export class CopyError extends Error {}

export interface CopyReport {
  tables: { name: string; rows: number; sha256: string }[];
  rows: number;
  ms: number;
}

/** Rows copied so far, of `total`, and the table being copied. */
export type CopyProgress = (done: number, total: number, table: string) => void;

/**
 * Copy the data directory's SQLite database into an empty PostgreSQL database (`parley db copy
 * --to`). The source may be live: it is read in one read transaction, a consistent snapshot
 * while the server goes on writing (what it writes after the snapshot is not copied). The target
 * is migrated, must hold no rows, and is written in one transaction that also reads every table
 * back and compares its row count and SHA-256 with the source's before it commits: a copy that
 * does not match leaves the target as empty as it was.
 */
export async function copySqliteToPg(dataDir: string, sql: SQL, onProgress: CopyProgress = () => {}): Promise<CopyReport> {
  const started = Date.now();
  const file = join(dataDir, DB_FILE);
  if (!existsSync(file)) throw new CopyError(`no database at ${file}: nothing to copy`);
  const source = new Database(file, { readonly: true, safeIntegers: true });
  try {
    const pending = pendingMigrations(source);
    if (pending.length) throw new CopyError(`the SQLite database needs ${pending.length} migration(s) first: run \`parley migrate\` with the server stopped`);
    const unknown = unknownMigrations(source);
    if (unknown.length) throw new CopyError(`the SQLite database was migrated by a newer Parley (${unknown.join(', ')}): copy it with that version`);
    const plan = tablePlan();
    await prepareEmptyPg(sql, plan);
    source.exec('BEGIN');
    try {
      // The first read fixes the snapshot every later read sees.
      const counts = plan.map((t) => Number((source.query(countSql(t)).get() as { n: bigint }).n));
      const total = counts.reduce((a, b) => a + b, 0);
      let done = 0;
      const tables = await sql.begin(async (tx) => {
        const digests: CopyReport['tables'] = [];
        for (const t of plan) {
          const digest = new TableDigest(t, 'sqlite');
          onProgress(done, total, t.name);
          for (const page of sqlitePages(source, t)) {
            for (const row of page) {
              const column = findNul(t, row);
              if (column) throw new CopyError(`${t.name} ${keyOf(t, row)}: ${column} holds a NUL character, which PostgreSQL cannot store; nothing was copied`);
              digest.add(row);
            }
            await tx.unsafe(pgInsert(t, page.length), page.flatMap((row) => t.columns.map((c) => sqliteToPg(c.kind, row[c.name]))) as never);
            done += page.length;
            onProgress(done, total, t.name);
          }
          digests.push({ name: t.name, ...digest.digest() });
        }
        await verifyAgainst(digests, plan, (t) => pgPages(tx as unknown as SQL, t), 'pg');
        return digests;
      });
      await sql.unsafe('ANALYZE');
      return { tables, rows: total, ms: Date.now() - started };
    } finally {
      source.exec('COMMIT');
    }
  } finally {
    source.close();
  }
}

/** The target migrated to this binary's schema and without a row in any table. */
async function prepareEmptyPg(sql: SQL, plan: TablePlan[]): Promise<void> {
  const version = await pgVersion(sql);
  if (version.num < MIN_PG_VERSION) throw new CopyError(`PostgreSQL ${version.text} is too old: Parley needs 15 or later`);
  const state = await pgMigrationState(sql);
  if (state.unknown.length) throw new CopyError(`the PostgreSQL database was migrated by a newer Parley (${state.unknown.join(', ')})`);
  await migratePg(sql);
  const filled: string[] = [];
  for (const t of plan) {
    const [row] = await sql.unsafe(`SELECT EXISTS (SELECT 1 FROM "${t.name}") AS any`);
    if (row.any) filled.push(t.name);
  }
  if (filled.length) throw new CopyError(`the PostgreSQL database is not empty (rows in ${filled.slice(0, 5).join(', ')}${filled.length > 5 ? ', …' : ''}): copy into an empty database`);
}

/**
 * Copy a PostgreSQL database into a new SQLite database in `dataDir` (`parley db copy --from`),
 * for an install that moves back to one machine. The source is read in one repeatable-read,
 * read-only transaction (a snapshot); the new file is written under a temporary name, checked
 * (every table's count and SHA-256 against the source's, SQLite's integrity and foreign-key
 * checks) and only then renamed to parley.db, which must not exist before.
 */
export async function copyPgToSqlite(sql: SQL, dataDir: string, onProgress: CopyProgress = () => {}): Promise<CopyReport> {
  const started = Date.now();
  const file = join(dataDir, DB_FILE);
  if (existsSync(file)) throw new CopyError(`${file} already exists: copy into a data directory without a database (move it away first)`);
  const orphan = findOrphanWal(file);
  if (orphan) throw new CopyError(`${file}: ${orphan.problem}; ${orphan.fix}`);
  const version = await pgVersion(sql);
  if (version.num < MIN_PG_VERSION) throw new CopyError(`PostgreSQL ${version.text} is too old: Parley needs 15 or later`);
  const state = await pgMigrationState(sql);
  if (!state.applied.length) throw new CopyError('the PostgreSQL database holds no Parley database (no migration record)');
  if (state.unknown.length) throw new CopyError(`the PostgreSQL database was migrated by a newer Parley (${state.unknown.join(', ')}): copy it with that version`);
  if (state.pending.length) throw new CopyError(`the PostgreSQL database needs ${state.pending.length} migration(s) first: run \`parley migrate\` with PARLEY_DATABASE_URL set`);

  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  removeStalePartials(dirname(file), 'copy');
  const partial = partialName(file, 'copy');
  closeSync(openSync(partial, 'wx', 0o600));
  try {
    const target = new Database(partial, { readwrite: true, safeIntegers: true });
    let report: CopyReport;
    try {
      target.exec('PRAGMA synchronous = OFF'); // the file is fsynced once, whole, before it is renamed
      target.exec('PRAGMA foreign_keys = ON');
      migrate(target);
      const plan = tablePlan();
      report = await sql.begin(async (tx) => {
        await tx.unsafe('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const counts: number[] = [];
        for (const t of plan) counts.push(Number((await tx.unsafe(countSql(t)))[0].n));
        const total = counts.reduce((a, b) => a + b, 0);
        let done = 0;
        const tables: CopyReport['tables'] = [];
        target.exec('BEGIN');
        try {
          for (const t of plan) {
            const digest = new TableDigest(t, 'pg');
            const insert = target.query(sqliteInsert(t));
            onProgress(done, total, t.name);
            for await (const page of pgPages(tx as unknown as SQL, t)) {
              for (const row of page) {
                digest.add(row);
                insert.run(...(t.columns.map((c) => pgToSqlite(c.kind, row[c.name])) as never[]));
              }
              done += page.length;
              onProgress(done, total, t.name);
            }
            tables.push({ name: t.name, ...digest.digest() });
          }
          target.exec('COMMIT');
        } catch (err) {
          target.exec('ROLLBACK');
          throw err;
        }
        return { tables, rows: total, ms: 0 };
      });
      await verifyAgainst(report.tables, plan, (t) => sqlitePages(target, t), 'sqlite');
      const broken = target.query<Record<string, unknown>, []>('PRAGMA foreign_key_check').all();
      if (broken.length) throw new CopyError(`the copy breaks ${broken.length} foreign key(s) (first in ${String(broken[0]!.table)}); nothing was written to ${file}`);
    } finally {
      target.close();
    }
    const problem = verifyDatabaseFile(partial);
    if (problem) throw new CopyError(`the new database failed its check (${problem}); nothing was written to ${file}`);
    placeNewFile(partial, file);
    return { ...report, ms: Date.now() - started };
  } catch (err) {
    removePartial(partial);
    throw err;
  }
}

/** Read every table of the copy back and hold its count and checksum against the source's. */
async function verifyAgainst(
  expected: CopyReport['tables'],
  plan: TablePlan[],
  pages: (t: TablePlan) => Iterable<Record<string, unknown>[]> | AsyncIterable<Record<string, unknown>[]>,
  from: 'sqlite' | 'pg',
): Promise<void> {
  const differ: string[] = [];
  for (const t of plan) {
    const digest = new TableDigest(t, from);
    for await (const page of pages(t)) for (const row of page) digest.add(row);
    const got = digest.digest();
    const want = expected.find((e) => e.name === t.name)!;
    if (got.rows !== want.rows || got.sha256 !== want.sha256) differ.push(`${t.name} (${want.rows} rows copied, ${got.rows} read back${got.rows === want.rows ? ', contents differ' : ''})`);
  }
  if (differ.length) throw new CopyError(`the copy does not match its source: ${differ.join('; ')}; nothing was kept`);
}

const keyOf = (t: TablePlan, row: Record<string, unknown>) => t.key.map((k) => `${k}=${String(row[k])}`).join(' ');
