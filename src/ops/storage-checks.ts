import type { Database } from 'bun:sqlite';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DB_FILE } from '../db/connection';
import { findOrphanWal, findSchemaProblem } from '../db/inspect-database';
import type { Check } from './checks';

/**
 * The database check's failure for a parley.db that `serve` refuses to open: no Parley tables
 * (a 0-byte file, an interrupted copy, another application's database), a migration record whose
 * tables are missing, or, given no `sqlite`, a missing parley.db whose WAL is still there.
 * Undefined when `serve` would open it.
 */
export function checkParleyDatabase(file: string, sqlite?: Database): Check | undefined {
  const found = sqlite ? findSchemaProblem(sqlite) : findOrphanWal(file);
  return found && { name: 'database', status: 'fail', detail: `${file}: ${found.problem}`, fix: found.fix };
}

/**
 * The data directory and the database hold every account and conversation: other users of the
 * machine should not read them. A warning, not a failure: Parley works either way, and the
 * systemd install and a fresh start both make them private (0700 and 0600).
 */
export function checkPermissions(dir: string): Check {
  const name = 'permissions';
  const mode = (path: string) => statSync(path).mode & 0o777;
  const open = (path: string) => existsSync(path) && (mode(path) & 0o077) !== 0;
  const files = [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`].map((f) => join(dir, f)).filter(open);
  const exposed = [...(open(dir) ? [dir] : []), ...files];
  if (!exposed.length) return { name, status: 'ok', detail: `${dir} and the database are private to their owner` };
  const fix = [...(open(dir) ? [`chmod 700 ${dir}`] : []), ...(files.length ? [`chmod 600 ${files.join(' ')}`] : [])];
  return {
    name,
    status: 'warn',
    detail: `other users of this machine may read or change ${exposed.map((p) => `${p} (${mode(p).toString(8).padStart(4, '0')})`).join(', ')}`,
    fix: fix.join(' && '),
  };
}
