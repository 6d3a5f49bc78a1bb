import type { SQL } from 'bun';
import type { Config } from '../config';
import { openDataDir, type Db } from './connection';
import { migrate, pendingMigrations } from './migrate';
import { migrations } from './migrations';
import { sqliteStore } from './store';
import type { Store } from './work';
import { connectPg, MIN_PG_VERSION, pgVersion } from './pg/connect';
import { maskUrl } from '../mask-secrets';
import { migratePg, pgMigrationState } from './pg/migrate';
import { drainWrites } from './commit-queue';

/**
 * The configured database, open: the embedded SQLite file in the data directory, or PostgreSQL
 * when PARLEY_DATABASE_URL is set (docs/scaling.md). The domains see only `store`; `db` (SQLite)
 * and `sql` (PostgreSQL) are for what is one database's own: backups, the commit queue, LISTEN.
 */
export interface OpenDatabase {
  store: Store;
  dialect: 'sqlite' | 'pg';
  db?: Db;
  sql?: SQL;
  /** Where the data is, for the log: the file, or the URL without its password. */
  where: string;
  /** Commit what is queued and close (SQLite: checkpoint the WAL first). */
  close(): Promise<void>;
}

export class PendingMigrationsError extends Error {}

/**
 * `migrations`: `apply` (the server at start: each one logged as it runs, several instances
 * queue on a lock), or `refuse-pending` (an admin command: a new, empty database is migrated; one
 * an older server may be running on is refused, see cli/context.ts).
 */
export async function openConfiguredDatabase(
  config: Config,
  opts: { migrations: 'apply' | 'refuse-pending'; onMigration?: (tag: string, step: number, of: number) => void; onApplied?: (tags: string[]) => void; poolSize?: number },
): Promise<OpenDatabase> {
  const applied = (tags: string[]) => tags.length && opts.onApplied?.(tags);
  const progress = (done: number, total: number, tag?: string) => tag && opts.onMigration?.(tag, done + 1, total);
  if (!config.databaseUrl) {
    const db = openDataDir(config.dataDir);
    if (opts.migrations === 'apply') applied(migrate(db.$client, undefined, progress));
    else {
      const pending = pendingMigrations(db.$client);
      if (pending.length === migrations.length) migrate(db.$client);
      else if (pending.length) {
        db.$client.close();
        throw new PendingMigrationsError(pendingMessage(pending));
      }
    }
    return {
      store: sqliteStore(db),
      dialect: 'sqlite',
      db,
      where: `${config.dataDir}/parley.db`,
      async close() {
        drainWrites(db); // writes queued in the last turn, before the connection goes
        db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)');
        db.$client.close();
      },
    };
  }
  // PostgreSQL's half of the schema (drizzle's pg-core tables) is loaded only for a PostgreSQL
  // database: a server on SQLite does not hold it (with Pyodide's glue, 5 MB of a 1 GB board's
  // idle memory, bench/RESULTS.md "Idle memory").
  const { pgStore } = await import('./pg/store');
  const sql = connectPg(config.databaseUrl, opts.poolSize ?? config.databasePool);
  try {
    const version = await pgVersion(sql);
    if (version.num < MIN_PG_VERSION) throw new Error(`PostgreSQL ${version.text} is too old: Parley needs 15 or later`);
    if (opts.migrations === 'apply') applied(await migratePg(sql, undefined, progress));
    else {
      const state = await pgMigrationState(sql);
      if (!state.applied.length) await migratePg(sql);
      else if (state.pending.length) throw new PendingMigrationsError(pendingMessage(state.pending));
    }
  } catch (err) {
    await sql.close();
    throw err;
  }
  return {
    store: pgStore(sql),
    dialect: 'pg',
    sql,
    where: maskUrl(config.databaseUrl),
    close: () => sql.close({ timeout: 2 }),
  };
}

const pendingMessage = (pending: string[]) =>
  `the database needs ${pending.length} migration(s) (${pending.join(', ')}). If the server is starting, it is applying them: wait for it and retry. Otherwise stop the server, run \`parley migrate\`, then start it (docs/self-hosting.md, Upgrades)`;
