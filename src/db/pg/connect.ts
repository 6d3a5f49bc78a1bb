import { SQL } from 'bun';
import { maskUrl } from '../../mask-secrets';

/**
 * A PostgreSQL connection pool on Bun's built-in client (no driver dependency). `max` is small:
 * the admin commands that use it today run one statement at a time.
 */
export function connectPg(url: string, max = 2): SQL {
  if (!/^postgres(ql)?:\/\//i.test(url)) throw new Error(`not a PostgreSQL URL (postgres://user:password@host:port/database): ${maskUrl(url)}`);
  return new SQL({ url, max, idleTimeout: 30, connectionTimeout: 10 });
}

/** The server's version, as `server_version_num` (150018 for 15.18) and its words. */
export async function pgVersion(sql: SQL): Promise<{ num: number; text: string }> {
  const [row] = await sql`SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS text`;
  return { num: Number(row.num), text: String(row.text) };
}

/** Parley needs PostgreSQL 15 or later (NULLS NOT DISTINCT aside, 15 is what Debian 12 ships and what is tested). */
export const MIN_PG_VERSION = 150000;
