import type { Config } from '../config';
import type { Logger } from '../log';
import type { OpenDatabase } from '../db/open-database';
import { createMemoryBus, type Bus } from './bus';
import { createClusterBus, type ClusterBus } from './cluster-bus';
import { pgTransport } from './pg-transport';
import { redisTransport } from './redis-transport';

/**
 * The realtime bus for the configured database: in-process on SQLite (one instance); shared by
 * every instance on PostgreSQL, over its LISTEN/NOTIFY, or over Redis/Valkey pub/sub when
 * PARLEY_REDIS_URL is set (docs/scaling.md).
 */
export async function openBus(
  config: Config,
  database: OpenDatabase,
  opts: { instanceId: string; log: Logger },
): Promise<{ bus: Bus; cluster?: ClusterBus; transport: 'memory' | 'postgres' | 'redis'; close(): Promise<void> }> {
  const { log } = opts;
  const onListenerError = (topic: string, err: unknown) => log.error('bus listener failed', { topic, cause: String(err) });
  if (database.dialect === 'sqlite' || !database.sql) {
    if (config.redisUrl) log.warn('PARLEY_REDIS_URL is unused: on SQLite Parley runs as one instance, and its events stay in the process');
    return { bus: createMemoryBus(onListenerError), transport: 'memory', close: async () => {} };
  }
  const transport = config.redisUrl ? redisTransport(config.redisUrl) : pgTransport(database.sql);
  const bus = createClusterBus(transport, {
    instanceId: opts.instanceId,
    onListenerError,
    onTransportError: (err) => log.warn('cluster bus: a message to the other instances could not be sent or read', { cause: String(err) }),
  });
  // A bus that cannot listen is not a cluster: the instance would serve streams that never hear
  // the others. Fail the start instead, with the reason.
  await bus.start();
  return { bus, cluster: bus, transport: config.redisUrl ? 'redis' : 'postgres', close: () => bus.close() };
}
