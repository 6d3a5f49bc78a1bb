import type { Command } from 'commander';
import { loadConfig, ConfigError, type Config } from '../src/config';
import { openDataDir, type Db } from '../src/db/connection';
import { sqliteStore } from '../src/db/store';
import type { Store } from '../src/db/work';
import { migrate, pendingMigrations } from '../src/db/migrate';
import { migrations } from '../src/db/migrations';
import { UnusableDatabaseError } from '../src/db/inspect-database';
import { readEnvFile, type EnvFile } from './env-file';

export interface CommonOptions {
  dataDir?: string;
  json?: boolean;
  envFile?: string;
}

/** Every command takes --data-dir (falls back to PARLEY_DATA_DIR), --env-file and --json. */
export function common(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'data directory (env PARLEY_DATA_DIR, default ./data)')
    .option('--env-file <file>', "read settings from this file too, as the service does (e.g. /etc/parley/parley.env); the environment's own win")
    .option('--json', 'print machine-readable JSON');
}

export class CliError extends Error {}

export function cliConfig(options: CommonOptions, flagNames: string[] = []): Config {
  const opts = options as CommonOptions & Record<string, unknown>;
  const flags: Record<string, string | undefined> = { '--data-dir': opts.dataDir };
  for (const name of flagNames) {
    const key = name.replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    if (opts[key] !== undefined) flags[name] = String(opts[key]);
  }
  return loadConfig(opts.envFile ? withEnvFile(opts.envFile) : process.env, flags);
}

/**
 * The file's settings under the environment's own. An empty variable in the shell does not hide
 * the file's value: empty means not set, as everywhere in the settings.
 */
function withEnvFile(path: string): Record<string, string | undefined> {
  let file: EnvFile;
  try {
    file = readEnvFile(path);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  for (const line of file.ignored) process.stderr.write(`parley: ${line}\n`);
  const own = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== ''));
  return { ...file.env, ...own };
}

/**
 * Open the data directory's database for a one-shot admin command. A new database is created
 * migrated (`parley user create` before the first start is fine). One that needs migrations is
 * refused: the server that may be running on it is older than this binary and writes rows the way
 * its own schema says; migrating under it (an upgrade's binary swapped in, an admin command run
 * before the restart) left data the new version then tripped over. Migrations are for
 * `parley migrate` with the server stopped, or for `parley serve` at start.
 */
export function openCliDb(opts: CommonOptions): { config: Config; db: Db; store: Store } {
  const config = cliConfig(opts);
  refusePostgres(config);
  const db = openDataDir(config.dataDir);
  const pending = pendingMigrations(db.$client);
  if (pending.length === migrations.length) migrate(db.$client);
  else if (pending.length) {
    db.$client.close();
    throw new CliError(
      `the database needs ${pending.length} migration(s) (${pending.join(', ')}). If the server is starting, it is applying them: wait for it and retry. Otherwise stop the server, run \`parley migrate\`, then start it (docs/self-hosting.md, Upgrades)`,
    );
  }
  return { config, db, store: sqliteStore(db) };
}

/**
 * Commands that run on SQLite only so far refuse to run while PARLEY_DATABASE_URL is set: a
 * user created, or a server started, in the SQLite file while the admin believes Parley is on
 * PostgreSQL would be lost from view at the switch (docs/scaling.md).
 */
export function refusePostgres(config: Config): void {
  if (config.databaseUrl)
    throw new CliError(
      'PARLEY_DATABASE_URL is set, and this command runs on SQLite only in this version of Parley (PostgreSQL is being built: `parley migrate`, `parley doctor` and `parley db copy` use it). Unset it to use the SQLite database in the data directory (docs/scaling.md)',
    );
}

/** Print `value` as JSON with --json, otherwise the human form. */
export function output(opts: CommonOptions, value: unknown, human: string): void {
  process.stdout.write((opts.json ? JSON.stringify(value) : human) + '\n');
}

/** Errors print one line to stderr and exit non-zero. */
export function runAction<A extends unknown[]>(fn: (...args: A) => unknown | Promise<unknown>) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      const known = err instanceof CliError || err instanceof ConfigError || err instanceof UnusableDatabaseError;
      process.stderr.write(`parley: ${known ? (err as Error).message : String((err as Error)?.message ?? err)}\n`);
      process.exit(known ? 2 : 1);
    }
  };
}
