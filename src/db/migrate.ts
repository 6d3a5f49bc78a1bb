import type { Database } from 'bun:sqlite';
import { migrations as embedded, type EmbeddedMigration } from './migrations';

const STATEMENT_BREAK = '--> statement-breakpoint';

/** Parley's record of the migrations applied: its presence is what marks a database as Parley's. */
export const MIGRATIONS_TABLE = '_parley_migrations';
export const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`;

/**
 * Apply the embedded migrations that have not run yet, in order, each in its own transaction,
 * recording each in `_parley_migrations`. Returns the tags applied by this call. `onProgress`
 * hears (applied so far, pending in all, next tag) before each one and once at the end.
 */
export function migrate(
  sqlite: Database,
  list: EmbeddedMigration[] = embedded,
  onProgress: (done: number, total: number, tag?: string) => void = () => {},
): string[] {
  sqlite.exec(CREATE_MIGRATIONS_TABLE);
  const done = new Set(appliedMigrations(sqlite));
  const applied: string[] = [];
  const todo = list.filter((m) => !done.has(m.tag));
  for (const m of todo) {
    onProgress(applied.length, todo.length, m.tag);
    const statements = m.sql
      .split(STATEMENT_BREAK)
      .map((s) => s.trim())
      .filter(Boolean);
    const ran = sqlite.transaction(() => {
      // Another process (a server starting while an admin runs `parley migrate`) may have applied
      // it since the list above was read: under the write lock, look again.
      if (sqlite.query('SELECT 1 FROM _parley_migrations WHERE tag = ?').get(m.tag)) return false;
      for (const stmt of statements) sqlite.exec(stmt);
      sqlite.query('INSERT INTO _parley_migrations (tag, applied_at) VALUES (?, ?)').run(m.tag, Date.now());
      return true;
    }).immediate();
    if (ran) applied.push(m.tag);
  }
  onProgress(applied.length, todo.length);
  return applied;
}

/** Tags recorded as applied to this database (none without the record). */
export function appliedMigrations(sqlite: Database): string[] {
  const exists = sqlite.query(`SELECT 1 FROM sqlite_master WHERE type='table' AND name='${MIGRATIONS_TABLE}'`).get();
  if (!exists) return [];
  return sqlite
    .query<{ tag: string }, []>(`SELECT tag FROM ${MIGRATIONS_TABLE}`)
    .all()
    .map((r) => r.tag);
}

/** Tags of embedded migrations not yet applied to this database. */
export function pendingMigrations(sqlite: Database, list: EmbeddedMigration[] = embedded): string[] {
  const done = new Set(appliedMigrations(sqlite));
  return list.filter((m) => !done.has(m.tag)).map((m) => m.tag);
}

/** Tags applied to this database that this binary does not know: a newer Parley migrated it. */
export function unknownMigrations(sqlite: Database, list: EmbeddedMigration[] = embedded): string[] {
  const known = new Set(list.map((m) => m.tag));
  return appliedMigrations(sqlite).filter((t) => !known.has(t));
}
