import type { Database } from 'bun:sqlite';
import { migrations as embedded, type EmbeddedMigration } from './migrations';

const STATEMENT_BREAK = '--> statement-breakpoint';

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
  sqlite.exec(
    'CREATE TABLE IF NOT EXISTS _parley_migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const done = new Set(
    sqlite
      .query<{ tag: string }, []>('SELECT tag FROM _parley_migrations')
      .all()
      .map((r) => r.tag),
  );
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

/** Tags of embedded migrations not yet applied to this database. */
export function pendingMigrations(sqlite: Database, list: EmbeddedMigration[] = embedded): string[] {
  const exists = sqlite
    .query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='_parley_migrations'")
    .get();
  if (!exists) return list.map((m) => m.tag);
  const done = new Set(
    sqlite
      .query<{ tag: string }, []>('SELECT tag FROM _parley_migrations')
      .all()
      .map((r) => r.tag),
  );
  return list.filter((m) => !done.has(m.tag)).map((m) => m.tag);
}
