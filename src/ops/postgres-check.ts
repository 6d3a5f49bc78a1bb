import { RedisClient } from 'bun';
import type { Config } from '../config';
import { connectPg, MIN_PG_VERSION, pgVersion } from '../db/pg/connect';
import { maskUrl } from '../mask-secrets';
import { pgMigrationState } from '../db/pg/migrate';
import type { Check } from './checks';

/**
 * `parley doctor` with PARLEY_DATABASE_URL: the server answers (within the client's connection
 * timeout), runs PostgreSQL 15 or later, and carries this binary's migrations; and with
 * PARLEY_REDIS_URL, that Redis answers.
 */
export async function checkPostgres(config: Config): Promise<Check[]> {
  const url = config.databaseUrl;
  if (!url) return [];
  return [...(await checkDatabase(url)), ...(config.redisUrl ? [await checkRedis(config.redisUrl)] : [])];
}

async function checkDatabase(url: string): Promise<Check[]> {
  const shown = maskUrl(url);
  let sql;
  try {
    sql = connectPg(url);
  } catch (err) {
    return [{ name: 'postgres', status: 'fail', detail: (err as Error).message, fix: 'set PARLEY_DATABASE_URL to postgres://user:password@host:5432/database' }];
  }
  try {
    let version;
    try {
      version = await pgVersion(sql);
    } catch (err) {
      return [{ name: 'postgres', status: 'fail', detail: `${shown}: ${(err as Error).message}`, fix: 'start PostgreSQL, or correct the host, port, user, password or database in PARLEY_DATABASE_URL' }];
    }
    const checks: Check[] = [];
    if (version.num < MIN_PG_VERSION)
      checks.push({ name: 'postgres', status: 'fail', detail: `${shown}: PostgreSQL ${version.text}`, fix: 'Parley needs PostgreSQL 15 or later' });
    else checks.push({ name: 'postgres', status: 'ok', detail: `${shown}: PostgreSQL ${version.text}` });
    const state = await pgMigrationState(sql);
    if (state.unknown.length)
      // Migrations stay compatible one version back, so this is expected while instances are upgraded one by one.
      checks.push({
        name: 'postgres migrations',
        status: 'warn',
        detail: `applied by a newer Parley: ${state.unknown.join(', ')}`,
        fix: 'fine during a rolling upgrade (docs/scaling.md, "Upgrades"); otherwise run the Parley version that migrated this database',
      });
    else if (state.pending.length)
      checks.push({ name: 'postgres migrations', status: 'warn', detail: `${state.pending.length} pending (${state.pending.join(', ')})`, fix: '`parley migrate` with PARLEY_DATABASE_URL set applies them' });
    else checks.push({ name: 'postgres migrations', status: 'ok', detail: `${state.applied.length} applied, none pending` });
    return checks;
  } finally {
    await sql.close();
  }
}

/** Redis (or Valkey) answers PING within a few seconds: the cluster's realtime events go through it. */
async function checkRedis(url: string): Promise<Check> {
  const shown = maskUrl(url);
  const client = new RedisClient(url, { autoReconnect: false, connectionTimeout: 3000 });
  try {
    const pong = await Promise.race([client.send('PING', []), Bun.sleep(5000).then(() => Promise.reject(new Error('no answer within 5 s')))]);
    return { name: 'redis', status: 'ok', detail: `${shown}: ${String(pong)}` };
  } catch (err) {
    return { name: 'redis', status: 'fail', detail: `${shown}: ${(err as Error).message}`, fix: 'start Redis or Valkey, or correct PARLEY_REDIS_URL (unset it to carry realtime events over PostgreSQL)' };
  } finally {
    client.close();
  }
}
