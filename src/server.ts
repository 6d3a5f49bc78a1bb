import { join } from 'node:path';
import type { Config } from './config';
import { drainWrites } from './db/commit-queue';
import { createApp, operations } from './app';
import type { AnyOperation } from './http/operation';
import { openDataDir, DB_FILE } from './db/connection';
import { migrate } from './db/migrate';
import { createLogger, type Logger } from './log';
import type { AppDeps } from './deps';
import { buildDeps } from './build-deps';
import { resumeInterruptedResponses } from './chat/respond';
import { startPruning } from './tasks/prune-expired';
import { createExpoClient } from './notifications/expo-client';
import { serveWithHost } from './http/hostless-request';

/** The budget of stop(): the CLI force-exits at 5 s, so hooks and connections must be done well before. */
const HOOK_BUDGET_MS = 2500;
const DRAIN_BUDGET_MS = 1000;

export interface RunningServer {
  url: string;
  port: number;
  deps: AppDeps;
  /** Stop accepting, close open streams, close the database. Idempotent. */
  stop(): Promise<void>;
}

/** Open the database, migrate, and listen. The caller decides when to stop (cli/serve.ts: on SIGTERM/SIGINT). */
export async function startServer(
  config: Config,
  log: Logger = createLogger(config.logLevel),
  /** Tests mount test-only operations (e.g. an event stream) beside the route table. */
  opts: { extraOperations?: readonly AnyOperation[] } = {},
): Promise<RunningServer> {
  const db = openDataDir(config.dataDir);
  // One line per migration before it runs: on a large database an upgrade's start can take a while.
  const applied = migrate(db.$client, undefined, (done, total, tag) => tag && log.info('applying migration', { tag, step: done + 1, of: total }));
  if (applied.length) log.info('migrations applied', { applied });
  // Push goes through Expo's SDK, loaded here so its base URL can come from the config.
  const push = config.pushEnabled ? await createExpoClient(config) : undefined;
  const deps = buildDeps({ config, db, log, push });
  const app = createApp(deps, opts.extraOperations ? [...operations, ...opts.extraOperations] : operations);
  const recovered = resumeInterruptedResponses(deps);
  if (recovered.resumed || recovered.failed) log.info('interrupted responses', recovered);
  // Running AI turns stop with the "shutdown" reason: their rows stay in_progress, upstream
  // background responses keep running, and the next start resumes them.
  deps.lifecycle.onShutdown('tasks', () => deps.tasks.shutdown());

  let origin = ''; // known once listening, before the first request
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    // Streams carry their own heartbeats (every two ticks at most, PARLEY_SSE_HEARTBEAT_S ≤ 25 s);
    // this bounds only truly dead sockets.
    idleTimeout: 60,
    // Operations bound their own bodies (413 with the envelope, src/http/body.ts). This is only
    // the backstop for absurd uploads, which Bun refuses with a bare 413 before Parley sees them.
    maxRequestBodySize: config.maxBodyBytes * 4 + 1024 * 1024,
    // A request whose URL Bun gives as the path alone (no usable Host) is served under the
    // origin Parley listens on, or refused when its Host is invalid (src/http/hostless-request.ts).
    fetch: (request) => serveWithHost(request, origin, app.handle, log),
    error: (err) => {
      log.error('server error', { cause: String(err) });
      return new Response(JSON.stringify({ defined: true, code: 'INTERNAL_SERVER_ERROR', status: 500, message: 'Unexpected server error.', data: {} }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
    },
  });
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${server.port}`;
  origin = url;
  log.info('listening', { url, database: join(config.dataDir, DB_FILE) });
  const stopPruning = startPruning(deps);
  deps.lifecycle.onShutdown('pruning', stopPruning);

  let stopping: Promise<void> | undefined;
  return {
    url,
    port: server.port!,
    deps,
    stop: () =>
      (stopping ??= (async () => {
        // 1. Stop accepting. 2. Abort the shutdown signal: open streams send their final frame and
        // end; hooks (task runner checkpoints, ...) run. 3. Give connections a moment to finish,
        // then cut what is left. 4. Checkpoint and close the database last, after every writer.
        const drained = server.stop(false);
        const hooks = await deps.lifecycle.shutdown(HOOK_BUDGET_MS);
        for (const h of hooks) if (!h.ok) log.warn('shutdown hook failed', { ...h });
        await Promise.race([drained, Bun.sleep(DRAIN_BUDGET_MS)]);
        await server.stop(true);
        drainWrites(db); // writes queued in the last turn, before the connection goes
        db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)');
        db.$client.close();
        log.info('stopped');
      })()),
  };
}
