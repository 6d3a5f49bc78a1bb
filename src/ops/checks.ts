import { Database } from 'bun:sqlite';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config';
import { DB_FILE } from '../db/connection';
import { pendingMigrations, unknownMigrations } from '../db/migrate';
import { migrations } from '../db/migrations';
import { checkParleyDatabase } from './storage-checks';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One line of `parley doctor`: what was checked, how it went, and what to do about it. */
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

export function checkDataDir(dir: string): Check {
  const name = 'data directory';
  if (!existsSync(dir))
    return { name, status: 'fail', detail: `${dir} does not exist`, fix: `create it with \`parley migrate --data-dir ${dir}\` (serve creates it too)` };
  if (!statSync(dir).isDirectory()) return { name, status: 'fail', detail: `${dir} is not a directory`, fix: 'point PARLEY_DATA_DIR or --data-dir at a directory' };
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return { name, status: 'fail', detail: `${dir} is not writable by this user`, fix: 'run doctor as the user Parley runs as (e.g. sudo -u parley parley doctor), or chown the directory to it' };
  }
  return { name, status: 'ok', detail: `${dir} (writable)` };
}

/**
 * Integrity and migrations of `<dataDir>/parley.db` (`access` is the permission check: tests run
 * as root, whom file modes do not stop). Opened read-only: doctor may run as root
 * beside a service running as another user, and must not leave root-owned WAL files behind.
 */
export function checkDatabase(dir: string, access: (file: string, mode: number) => void = accessSync): Check[] {
  const file = join(dir, DB_FILE);
  if (!existsSync(file))
    return [checkParleyDatabase(file) ?? { name: 'database', status: 'warn', detail: `${file} does not exist yet`, fix: '`parley migrate` creates it; `parley serve` does too at start' }];
  try {
    access(file, constants.R_OK);
  } catch {
    return [{ name: 'database', status: 'fail', detail: `${file} is not readable by this user`, fix: 'run doctor as the user Parley runs as (e.g. sudo -u parley parley doctor)' }];
  }
  // Writable too, with its WAL files: a database an admin command made as root (sudo without
  // -u parley) reads fine and fails every write of the service.
  const readOnly = [file, `${file}-wal`, `${file}-shm`].filter((f) => {
    if (!existsSync(f)) return false;
    try {
      access(f, constants.W_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (readOnly.length)
    return [
      {
        name: 'database',
        status: 'fail',
        detail: `not writable by this user: ${readOnly.join(', ')}`,
        fix: `run doctor as the user Parley runs as; if that is the user, give the files back to it (e.g. sudo chown parley:parley ${readOnly.join(' ')})`,
      },
    ];
  let sqlite: Database | undefined;
  try {
    sqlite = new Database(file, { readonly: true });
    const rows = sqlite.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all();
    const problems = rows.map((r) => r.integrity_check).filter((r) => r !== 'ok');
    if (problems.length)
      return [{ name: 'database', status: 'fail', detail: `${file}: ${problems.slice(0, 3).join('; ')}`, fix: 'stop Parley and restore the latest backup (docs/self-hosting.md, "Restore")' }];
    const unusable = checkParleyDatabase(file, sqlite);
    if (unusable) return [unusable];
    return [{ name: 'database', status: 'ok', detail: `${file} (integrity ok)` }, checkMigrations(sqlite)];
  } catch (err) {
    return [{ name: 'database', status: 'fail', detail: `${file}: ${(err as Error).message}`, fix: 'restore the latest backup (docs/self-hosting.md, "Restore"), or move the file away to start empty' }];
  } finally {
    sqlite?.close();
  }
}

function checkMigrations(sqlite: Database): Check {
  const name = 'migrations';
  const pending = pendingMigrations(sqlite);
  const unknown = unknownMigrations(sqlite);
  if (unknown.length)
    return { name, status: 'fail', detail: `the database was migrated by a newer Parley (${unknown.join(', ')})`, fix: 'install that newer binary again, or restore the backup taken before the upgrade' };
  if (pending.length)
    return { name, status: 'warn', detail: `${pending.length} pending: ${pending.join(', ')}`, fix: 'run `parley migrate` (or restart `parley serve`, which migrates at start); back up first' };
  return { name, status: 'ok', detail: `all ${migrations.length} applied` };
}

/** Settings that parse but are risky on a server reachable by others: every one that applies, not just the first. */
export function checkConfigSense(config: Config): Check {
  const loopback = ['127.0.0.1', '::1', 'localhost'].includes(config.host);
  const risks: { detail: string; fix: string }[] = [];
  if (config.env === 'development')
    risks.push({
      detail: 'PARLEY_ENV=development enables test-only operations (e.g. credits/grantAdReward)',
      fix: 'remove PARLEY_ENV (or set it to production) outside development',
    });
  if (!loopback && !config.cookieSecure)
    risks.push({
      detail: `listening on ${config.host} with PARLEY_COOKIE_SECURE=false`,
      fix: 'serve Parley through a TLS reverse proxy and set PARLEY_COOKIE_SECURE=true (docs/self-hosting.md)',
    });
  if (risks.length)
    return { name: 'config', status: 'warn', detail: risks.map((r) => r.detail).join('; '), fix: risks.map((r) => r.fix).join('; ') };
  return { name: 'config', status: 'ok', detail: `listening on ${config.host}:${config.port}, env ${config.env}` };
}
