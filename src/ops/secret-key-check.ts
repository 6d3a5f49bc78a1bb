import type { Config } from '../config';
import type { Check } from './checks';

/**
 * Connections' credentials are sealed with one key (src/connections/seal.ts). On PostgreSQL the
 * instances usually have data directories of their own, each of which would make its own key
 * file: a credential sealed on one would not open on another.
 */
export function checkSecretKey(config: Config): Check {
  const name = 'secret key';
  if (config.secretKey) return { name, status: 'ok', detail: 'PARLEY_SECRET_KEY is set (keep it with your backups)' };
  if (config.databaseUrl)
    return {
      name,
      status: 'warn',
      detail: 'on PostgreSQL, credentials are sealed with the key file of this data directory: other instances cannot open them unless they share it',
      fix: 'set the same PARLEY_SECRET_KEY on every instance (docs/connections.md, "The key")',
    };
  return { name, status: 'ok', detail: `credentials sealed with ${config.dataDir}/secret.key (back it up with the database)` };
}
