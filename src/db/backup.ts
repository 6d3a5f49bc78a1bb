import type { Database } from 'bun:sqlite';
import { existsSync } from 'node:fs';

/**
 * Write a consistent copy of the live database to `file` with `VACUUM INTO`. It reads one
 * snapshot, so writers keep going while it runs, and the copy is compact and self-contained
 * (no WAL beside it).
 */
export function backupDatabase(sqlite: Database, file: string): void {
  if (existsSync(file)) throw new Error(`${file} already exists; refusing to overwrite it`);
  sqlite.query('VACUUM INTO ?').run(file);
}
