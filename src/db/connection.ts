import { Database } from 'bun:sqlite';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as schema from './schema';

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export const DB_FILE = 'parley.db';

/**
 * Open the database with Parley's pragmas. One connection serves the whole process: bun:sqlite
 * is synchronous, so extra connections would not add parallelism inside one event loop, and a
 * single writer means SQLite never has to arbitrate writers (docs/architecture.md).
 */
export function openDatabase(path: string): Db {
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  sqlite.exec('PRAGMA foreign_keys = ON');
  sqlite.exec('PRAGMA busy_timeout = 5000');
  sqlite.exec('PRAGMA temp_store = MEMORY');
  return drizzle({ client: sqlite, schema }) as Db;
}

/** Open `<dataDir>/parley.db`, creating the directory when needed. */
export function openDataDir(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true });
  return openDatabase(join(dataDir, DB_FILE));
}

/** `BEGIN IMMEDIATE` transaction: takes the write lock up front so it never fails half-way on a busy lock. */
export function writeTx<T>(db: Db, fn: (tx: Db) => T): T {
  return db.transaction((tx) => fn(tx as unknown as Db), { behavior: 'immediate' });
}
