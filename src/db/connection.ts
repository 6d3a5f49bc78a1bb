import { Database } from 'bun:sqlite';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as schema from './schema';
import { CREATE_MIGRATIONS_TABLE } from './migrate';
import { findOrphanWal, findSchemaProblem, UnusableDatabaseError } from './inspect-database';
import { partialName, placeNewFile, removePartial, removeStalePartials } from './partial-file';

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export const DB_FILE = 'parley.db';

/**
 * Open the database with Parley's pragmas. One connection serves the whole process: bun:sqlite
 * is synchronous, so extra connections would not add parallelism inside one event loop, and a
 * single writer means SQLite never has to arbitrate writers (docs/architecture.md).
 */
export function openDatabase(path: string): Db {
  return withPragmas(new Database(path, { create: true, strict: true }));
}

function withPragmas(sqlite: Database): Db {
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  sqlite.exec('PRAGMA foreign_keys = ON');
  sqlite.exec('PRAGMA busy_timeout = 5000');
  sqlite.exec('PRAGMA temp_store = MEMORY');
  return drizzle({ client: sqlite, schema }) as Db;
}

/**
 * Open `<dataDir>/parley.db`, creating the directory and the database when needed. An existing
 * file must be a Parley database (`findSchemaProblem`): a 0-byte or table-less parley.db (an
 * interrupted copy, a killed backup restored) would otherwise be migrated into an empty database
 * and served as if the data directory were new. Throws `UnusableDatabaseError` before writing
 * anything to such a file.
 */
export function openDataDir(dataDir: string): Db {
  // Private from the start: the database holds every account and conversation. An existing
  // directory keeps its mode (doctor warns when others can read it).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, DB_FILE);
  const orphan = findOrphanWal(file);
  if (orphan) throw new UnusableDatabaseError(file, orphan);
  if (!existsSync(file)) createDatabaseFile(file);
  const sqlite = new Database(file, { readwrite: true, strict: true });
  const problem = findSchemaProblem(sqlite);
  if (problem) {
    sqlite.close();
    throw new UnusableDatabaseError(file, problem);
  }
  return withPragmas(sqlite);
}

/**
 * Make a new, empty Parley database at `file`: mode 0600 (SQLite gives its -wal and -shm files
 * the database's mode), its migration record already in it. It is written under a temporary
 * name and linked into place, so `file` never exists without Parley's mark, whoever is killed
 * when, and a process that loses a race to create it uses the winner's.
 */
function createDatabaseFile(file: string): void {
  removeStalePartials(dirname(file), 'create');
  const partial = partialName(file, 'create');
  closeSync(openSync(partial, 'wx', 0o600));
  const sqlite = new Database(partial, { readwrite: true });
  try {
    sqlite.exec('PRAGMA journal_mode = OFF'); // no -journal file to leave behind: the rename is the commit
    sqlite.exec(CREATE_MIGRATIONS_TABLE);
  } finally {
    sqlite.close();
  }
  try {
    placeNewFile(partial, file);
  } catch (err) {
    removePartial(partial);
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** `BEGIN IMMEDIATE` transaction: takes the write lock up front so it never fails half-way on a busy lock. */
export function writeTx<T>(db: Db, fn: (tx: Db) => T): T {
  // The transaction runs on the same connection: its `$client` is the database's, so a store's
  // prepared statements (src/db/prepared.ts) serve inside a transaction as outside.
  return db.transaction((tx) => fn(Object.assign(tx, { $client: db.$client }) as unknown as Db), { behavior: 'immediate' });
}
