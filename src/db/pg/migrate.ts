import type { SQL } from 'bun';
import type { EmbeddedMigration } from '../migrations';
import { MIGRATIONS_TABLE } from '../migrate';
import { pgMigrations, statementsOf } from './migrations';

/**
 * The PostgreSQL side of src/db/migrate.ts: the same `_parley_migrations` record, each migration
 * in its own transaction. Several instances may start at once against one database: each
 * migration's transaction first takes a transaction-scoped advisory lock, so they queue, and the
 * record is read again under it (as SQLite's immediate transaction does).
 */
const LOCK_KEY = 0x70617231; // "par1": one key for Parley's migrations in this database

export async function migratePg(
  sql: SQL,
  list: EmbeddedMigration[] = pgMigrations,
  onProgress: (done: number, total: number, tag?: string) => void = () => {},
): Promise<string[]> {
  await sql.unsafe(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (tag text PRIMARY KEY, applied_at bigint NOT NULL)`).catch(async (err) => {
    // Two instances creating the record at once: one wins, the other finds it there.
    if (!(await recordExists(sql))) throw err;
  });
  const done = new Set(await appliedPgMigrations(sql));
  const todo = list.filter((m) => !done.has(m.tag));
  const applied: string[] = [];
  for (const m of todo) {
    onProgress(applied.length, todo.length, m.tag);
    const ran = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOCK_KEY})`;
      const [again] = await tx.unsafe(`SELECT 1 FROM ${MIGRATIONS_TABLE} WHERE tag = $1`, [m.tag]);
      if (again) return false;
      for (const statement of statementsOf(m)) await tx.unsafe(statement);
      await tx.unsafe(`INSERT INTO ${MIGRATIONS_TABLE} (tag, applied_at) VALUES ($1, $2)`, [m.tag, Date.now()]);
      return true;
    });
    if (ran) applied.push(m.tag);
  }
  for (const tag of applied) for (const statement of AFTER[tag] ?? []) await sql.unsafe(statement);
  onProgress(applied.length, todo.length);
  return applied;
}

/**
 * Statements run once a migration is applied, outside its transaction (VACUUM cannot run in one).
 * 0024 rewrites `file_chunks`, which leaves its visibility map empty: until a vacuum, reading a
 * search's codes from their covering index visits every heap page as well (the first search of
 * 100,000 chunks at 1,536 dimensions took 3–4 s instead of 0.6–2 s), and the rewritten column has
 * no statistics.
 */
const AFTER: Record<string, string[]> = {
  '0025_vectors_in_row': ['VACUUM (ANALYZE) file_chunks'],
};

async function recordExists(sql: SQL): Promise<boolean> {
  const [row] = await sql`SELECT to_regclass(${MIGRATIONS_TABLE}) IS NOT NULL AS present`;
  return !!row?.present;
}

/** Tags recorded as applied (none without the record). */
export async function appliedPgMigrations(sql: SQL): Promise<string[]> {
  if (!(await recordExists(sql))) return [];
  return (await sql.unsafe(`SELECT tag FROM ${MIGRATIONS_TABLE} ORDER BY tag`)).map((r: { tag: string }) => r.tag);
}

/** What this binary would apply, and what a newer Parley applied that this one does not know. */
export async function pgMigrationState(sql: SQL, list: EmbeddedMigration[] = pgMigrations): Promise<{ applied: string[]; pending: string[]; unknown: string[] }> {
  const applied = await appliedPgMigrations(sql);
  const done = new Set(applied);
  const known = new Set(list.map((m) => m.tag));
  return { applied, pending: list.filter((m) => !done.has(m.tag)).map((m) => m.tag), unknown: applied.filter((t) => !known.has(t)) };
}
