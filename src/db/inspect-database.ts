import { Database } from 'bun:sqlite';
import { existsSync, statSync } from 'node:fs';
import { MIGRATIONS_TABLE, appliedMigrations } from './migrate';
import { migrations as embedded, type EmbeddedMigration } from './migrations';

/** What is wrong with a database file, and what the self-hoster can do about it. */
export interface DatabaseProblem {
  problem: string;
  fix: string;
}

/** `parley serve` and the admin commands refuse a database file with a problem: exit 2, this message. */
export class UnusableDatabaseError extends Error {
  constructor(file: string, { problem, fix }: DatabaseProblem) {
    super(`refusing to open ${file}: ${problem}. To fix: ${fix}`);
  }
}

const RESTORE = 'restore a backup (`parley restore FILE`, docs/self-hosting.md, "Restore")';
const START_EMPTY = 'or, to start a new empty database, move it away together with any -wal and -shm file beside it';

const NAME = '[`"\\[]?(\\w+)[`"\\]]?';
const STATEMENT = new RegExp(
  `CREATE\\s+(?:VIRTUAL\\s+)?TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?${NAME}|DROP\\s+TABLE\\s+(?:IF\\s+EXISTS\\s+)?${NAME}|ALTER\\s+TABLE\\s+${NAME}\\s+RENAME\\s+TO\\s+${NAME}`,
  'gi',
);

/**
 * The tables `list` leaves behind, replaying its CREATE, DROP and RENAME statements in order (the
 * way drizzle-kit rebuilds a table: create `__new_x`, drop `x`, rename `__new_x` to `x`).
 */
export function tablesAfter(list: EmbeddedMigration[]): Set<string> {
  const tables = new Set<string>();
  for (const m of list)
    for (const [, created, dropped, from, to] of m.sql.matchAll(STATEMENT)) {
      if (created) tables.add(created);
      if (dropped) tables.delete(dropped);
      if (from && to) {
        tables.delete(from);
        tables.add(to);
      }
    }
  return tables;
}

/**
 * Why the open database is not a Parley database this binary can use as it is, or undefined.
 * Parley's mark is its migration record: a database Parley creates has it from its first byte
 * (`openDataDir`), so a file without it never is one of ours cut short. The tables the recorded
 * migrations created must all be there; migrations still to run are `migrate`'s business.
 */
export function findSchemaProblem(sqlite: Database): DatabaseProblem | undefined {
  const present = new Set(
    sqlite
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((r) => r.name),
  );
  if (!present.size)
    return { problem: 'it holds no tables: an empty file, or a copy interrupted before it was complete', fix: `${RESTORE}; ${START_EMPTY}` };
  if (!present.has(MIGRATIONS_TABLE)) {
    const ours = [...present].filter((t) => tablesAfter(embedded).has(t));
    if (!ours.length)
      return {
        problem: `it holds no Parley tables (it has ${[...present].slice(0, 5).join(', ')}): another application's database?`,
        fix: `point --data-dir (PARLEY_DATA_DIR) at Parley's data directory; ${START_EMPTY}`,
      };
    return { problem: `it has Parley tables but no migration record (${MIGRATIONS_TABLE})`, fix: RESTORE };
  }
  const applied = new Set(appliedMigrations(sqlite));
  const missing = [...tablesAfter(embedded.filter((m) => applied.has(m.tag)))].filter((t) => !present.has(t));
  if (missing.length)
    return {
      problem: `its migration record lists ${applied.size} migration(s), but tables they created are missing: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`,
      fix: RESTORE,
    };
  return undefined;
}

/**
 * A parley.db that is missing while its write-ahead log is not: SQLite would replay that log
 * onto a new database (an old database's pages onto an empty file), so it is refused too.
 */
export function findOrphanWal(file: string): DatabaseProblem | undefined {
  const wal = `${file}-wal`;
  if (existsSync(file) || !existsSync(wal) || statSync(wal).size === 0) return undefined;
  return {
    problem: `it is missing, but ${wal} is there: the database was moved or deleted without its write-ahead log`,
    fix: `put the database back; or, to start a new empty database, move ${wal} and ${file}-shm away too`,
  };
}

/**
 * Why the SQLite file `file` cannot serve as a Parley database, or undefined: SQLite's `check`
 * (integrity_check, or the quicker quick_check), then Parley's tables. Opened read-only.
 */
export function verifyDatabaseFile(file: string, check: 'integrity_check' | 'quick_check' = 'integrity_check'): string | undefined {
  let sqlite: Database | undefined;
  try {
    sqlite = new Database(file, { readonly: true });
    const problems = sqlite
      .query<Record<string, string>, []>(`PRAGMA ${check}`)
      .all()
      .map((r) => Object.values(r)[0])
      .filter((r) => r !== 'ok');
    if (problems.length) return problems.slice(0, 3).join('; ');
    return findSchemaProblem(sqlite)?.problem;
  } catch (err) {
    return (err as Error).message;
  } finally {
    sqlite?.close();
  }
}
