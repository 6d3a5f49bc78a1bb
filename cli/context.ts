import type { Command } from 'commander';
import { loadConfig, ConfigError, type Config } from '../src/config';
import type { Store } from '../src/db/work';
import { openConfiguredDatabase, PendingMigrationsError } from '../src/db/open-database';
import type { SQL } from 'bun';
import { newId } from '../src/ids';
import { createClusterBus } from '../src/pubsub/cluster-bus';
import { createMemoryBus, type Bus } from '../src/pubsub/bus';
import { pgTransport } from '../src/pubsub/pg-transport';
import { redisTransport } from '../src/pubsub/redis-transport';
import { CREDENTIALS_TOPIC } from '../src/auth/credential-relay';
import { onCredentialsChanged } from '../src/auth/credential-cache';
import { UnusableDatabaseError } from '../src/db/inspect-database';
import { readEnvFile, type EnvFile } from './env-file';
import { maskSecretsIn } from '../src/mask-secrets';

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
  return cliSettings(options, flagNames).config;
}

/**
 * The settings, and the environment they were read from (the shell's over the --env-file's): what
 * was given, as opposed to a default, is for the few commands that must tell them apart (the
 * address a printed link starts with, cli/server-address.ts).
 */
export function cliSettings(options: CommonOptions, flagNames: string[] = []): { config: Config; env: Record<string, string | undefined> } {
  const opts = options as CommonOptions & Record<string, unknown>;
  const flags: Record<string, string | undefined> = { '--data-dir': opts.dataDir };
  for (const name of flagNames) {
    const key = name.replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    if (opts[key] !== undefined) flags[name] = String(opts[key]);
  }
  const env = opts.envFile ? withEnvFile(opts.envFile) : process.env;
  return { config: loadConfig(env, flags), env };
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
 * Open the configured database (the data directory's SQLite file, or PostgreSQL with
 * PARLEY_DATABASE_URL) for a one-shot admin command; it is closed when the command ends
 * (`runAction`). A new database is created migrated (`parley user create` before the first start
 * is fine). One that needs migrations is refused: the server that may be running on it is older
 * than this binary and writes rows the way its own schema says; migrating under it (an upgrade's
 * binary swapped in, an admin command run before the restart) left data the new version then
 * tripped over. Migrations are for `parley migrate`, or for `parley serve` at start.
 */
export async function openCliStore(opts: CommonOptions): Promise<{ config: Config; store: Store; bus: Bus; env: Record<string, string | undefined> }> {
  const { config, env } = cliSettings(opts);
  let open;
  try {
    open = await openConfiguredDatabase(config, { migrations: 'refuse-pending', poolSize: 2 });
  } catch (err) {
    if (err instanceof PendingMigrationsError) throw new CliError(err.message);
    throw err;
  }
  const relay = open.sql ? relayCredentialChanges(config, open.sql) : undefined;
  closers.push(async () => {
    await relay?.close();
    await open.close();
  });
  // On PostgreSQL what this command publishes (a connection changed) reaches the running instances.
  return { config, store: open.store, bus: relay?.bus ?? createMemoryBus(), env };
}

/**
 * On PostgreSQL, the running instances cache credentials: a key revoked or a user locked here is
 * told to them on the cluster bus (src/auth/credential-relay.ts), so their caches forget it and
 * its open streams end at once. Returns what sends the last messages before the command exits.
 */
function relayCredentialChanges(config: Config, sql: SQL): { bus: Bus; close: () => Promise<void> } {
  const from = newId();
  const bus = createClusterBus(config.redisUrl ? redisTransport(config.redisUrl) : pgTransport(sql), { instanceId: from });
  const off = onCredentialsChanged((userId, where) => {
    if (userId !== undefined && where === 'here') bus.publish(CREDENTIALS_TOPIC, { userId, from });
  });
  return {
    bus,
    close: async () => {
      off();
      await bus.close();
    },
  };
}

/** What the command opened, closed when it ends (a PostgreSQL pool would otherwise hold the process). */
const closers: (() => Promise<void>)[] = [];

/**
 * Commands that work on the SQLite file only (backup, restore) refuse to run while
 * PARLEY_DATABASE_URL is set, saying what to use instead: a backup of the unused SQLite file
 * while the admin believes Parley's data is in it would be worse than none.
 */
export function refusePostgres(config: Config, instead: string): void {
  if (config.databaseUrl) throw new CliError(`PARLEY_DATABASE_URL is set, and this command works on the SQLite database in the data directory only: ${instead} (docs/scaling.md)`);
}

async function closeOpened(): Promise<void> {
  for (const close of closers.splice(0)) await close();
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
      await closeOpened();
    } catch (err) {
      await closeOpened().catch(() => undefined);
      const known = err instanceof CliError || err instanceof ConfigError || err instanceof UnusableDatabaseError;
      process.stderr.write(`parley: ${maskSecretsIn(known ? (err as Error).message : String((err as Error)?.message ?? err))}\n`);
      process.exit(known ? 2 : 1);
    }
  };
}
