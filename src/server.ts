import { join } from 'node:path';
import type { Config } from './config';
import { createApp } from './app';
import { openDataDir, DB_FILE } from './db/connection';
import { migrate } from './db/migrate';
import { createLogger, type Logger } from './log';
import type { AppDeps } from './deps';
import { noopNotifier } from './notifications/notifier';
import { createAiProvider } from './ai/provider';
import { createExpoClient } from './notifications/expo-client';
import { createExpoNotifier } from './notifications/research-push';
import { createMemoryBus } from './pubsub/bus';
import { createOpenStreams } from './http/stream-limit';
import { startGroupEventPruner } from './groups/group-events.store';

export interface RunningServer {
  url: string;
  port: number;
  deps: AppDeps;
  /** Stop accepting, close open streams, close the database. Idempotent. */
  stop(): Promise<void>;
}

/** Open the database, migrate, and listen. The caller decides when to stop (cli/serve.ts: on SIGTERM/SIGINT). */
export async function startServer(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  const db = openDataDir(config.dataDir);
  const applied = migrate(db.$client);
  if (applied.length) log.info('migrations applied', { applied });
  // Push goes through Expo's SDK, loaded here so its base URL can come from the config.
  const push = config.pushEnabled ? await createExpoClient(config) : undefined;
  const notifier = push ? createExpoNotifier({ db, log, push, config }) : noopNotifier;
  const bus = createMemoryBus((topic, err) => log.error('bus listener failed', { topic, cause: String(err) }));
  const openStreams = createOpenStreams(config.maxStreamsPerUser);
  const deps: AppDeps = { config, db, log, now: Date.now, notifier, push, ai: createAiProvider(config), bus, openStreams };
  const stopPruner = startGroupEventPruner(deps);
  const app = createApp(deps);

  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    // Streams carry their own heartbeats; this bounds only truly dead sockets.
    idleTimeout: 60,
    maxRequestBodySize: config.maxBodyBytes + 1024,
    fetch: (request) => app.handle(request),
    error: (err) => {
      log.error('server error', { cause: String(err) });
      return new Response(JSON.stringify({ defined: true, code: 'INTERNAL_SERVER_ERROR', status: 500, message: 'Unexpected server error.', data: {} }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
    },
  });
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${server.port}`;
  log.info('listening', { url, database: join(config.dataDir, DB_FILE) });

  let stopping: Promise<void> | undefined;
  return {
    url,
    port: server.port!,
    deps,
    stop: () =>
      (stopping ??= (async () => {
        stopPruner();
        await server.stop(true);
        db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)');
        db.$client.close();
        log.info('stopped');
      })()),
  };
}
