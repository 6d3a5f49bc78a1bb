import type { Database } from 'bun:sqlite';
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
