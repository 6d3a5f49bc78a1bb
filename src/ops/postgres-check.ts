import type { Config } from '../config';
import { connectPg, maskUrl, MIN_PG_VERSION, pgVersion } from '../db/pg/connect';
import { pgMigrationState } from '../db/pg/migrate';
import type { Check } from './checks';

/**
 * `parley doctor` with PARLEY_DATABASE_URL: the server answers (within the client's connection
 * timeout), runs PostgreSQL 15 or later, and carries this binary's migrations. And, while
 * serving from PostgreSQL is being built, that `parley serve` refuses to start with it set.
 */
export async function checkPostgres(config: Config): Promise<Check[]> {
  const url = config.databaseUrl;
  if (!url) return [];
  const shown = maskUrl(url);
  const serving: Check = {
    name: 'server database',
    status: 'fail',
    detail: 'PARLEY_DATABASE_URL is set, and this version of Parley serves from SQLite only: `parley serve` refuses to start',
    fix: 'unset PARLEY_DATABASE_URL for the service (keep it for `parley db copy` and `parley migrate`); docs/scaling.md',
  };
  let sql;
  try {
    sql = connectPg(url);
  } catch (err) {
    return [{ name: 'postgres', status: 'fail', detail: (err as Error).message, fix: 'set PARLEY_DATABASE_URL to postgres://user:password@host:5432/database' }, serving];
  }
  try {
    let version;
    try {
      version = await pgVersion(sql);
    } catch (err) {
      return [
        { name: 'postgres', status: 'fail', detail: `${shown}: ${(err as Error).message}`, fix: 'start PostgreSQL, or correct the host, port, user, password or database in PARLEY_DATABASE_URL' },
        serving,
      ];
    }
    const checks: Check[] = [];
    if (version.num < MIN_PG_VERSION)
      checks.push({ name: 'postgres', status: 'fail', detail: `${shown}: PostgreSQL ${version.text}`, fix: 'Parley needs PostgreSQL 15 or later' });
    else checks.push({ name: 'postgres', status: 'ok', detail: `${shown}: PostgreSQL ${version.text}` });
    const state = await pgMigrationState(sql);
    if (state.unknown.length)
      checks.push({ name: 'postgres migrations', status: 'fail', detail: `applied by a newer Parley: ${state.unknown.join(', ')}`, fix: 'run the Parley version that migrated this database' });
    else if (state.pending.length)
      checks.push({ name: 'postgres migrations', status: 'warn', detail: `${state.pending.length} pending (${state.pending.join(', ')})`, fix: '`parley migrate` with PARLEY_DATABASE_URL set applies them' });
    else checks.push({ name: 'postgres migrations', status: 'ok', detail: `${state.applied.length} applied, none pending` });
    checks.push(serving);
    return checks;
  } finally {
    await sql.close();
  }
}
