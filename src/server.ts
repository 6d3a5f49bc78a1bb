import type { Config } from './config';
import { createApp, operations } from './app';
import type { AnyOperation } from './http/operation';
import { openConfiguredDatabase } from './db/open-database';
import { openBus } from './pubsub/open-bus';
import { newId } from './ids';
import { createLogger, type Logger } from './log';
import type { AppDeps } from './deps';
import { buildDeps } from './build-deps';
import { resumeInterruptedResponses } from './chat/respond';
import { startTurnKeeper } from './chat/turn-keeper';
import { endInterruptedApiResponses } from './openai-compat/background-responses';
import { apiEventLog } from './openai-compat/api-events';
import { startAnswerKeeper } from './groups/group-assistant';
import { startCredentialRelay } from './auth/credential-relay';
import { attachGroupRelay } from './groups/group-events';
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
  /** Where the data is: the SQLite file, or the PostgreSQL URL without its password. */
  database: string;
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
  // One line per migration before it runs: on a large database an upgrade's start can take a while.
  const database = await openConfiguredDatabase(config, { migrations: 'apply', onMigration: (tag, step, of) => log.info('applying migration', { tag, step, of }), onApplied: (applied) => log.info('migrations applied', { applied }) });
  // Push goes through Expo's SDK, loaded here so its base URL can come from the config.
  const push = config.pushEnabled ? await createExpoClient(config) : undefined;
  const instanceId = newId();
  const realtime = await openBus(config, database, { instanceId, log }).catch(async (err) => {
    await database.close();
    throw err;
  });
  const deps = buildDeps({ config, db: database.db, store: database.store, bus: realtime.bus, instanceId, log, push });
  // The environment's settings become (or refresh) their connection rows before anything resolves a model.
  await deps.connections.ready();
  const app = createApp(deps, opts.extraOperations ? [...operations, ...opts.extraOperations] : operations);
  // On SQLite this process is the only one: every unfinished turn was its previous process's.
  const recovered = await resumeInterruptedResponses(deps, database.dialect === 'sqlite' ? 'any' : 'orphan');
  if (recovered.resumed || recovered.failed) log.info('interrupted responses', recovered);
  // The /v1 door's background responses cannot be continued by another process: they end, saying so.
  const apiLog = apiEventLog(deps);
  const ended = await endInterruptedApiResponses(deps, apiLog, database.dialect === 'sqlite' ? 'any' : 'orphan');
  if (ended) log.info('interrupted v1 responses', { failed: ended });
  // Running AI turns stop with the "shutdown" reason: their rows stay in_progress, upstream
  // background responses keep running, and the next start resumes them.
  deps.lifecycle.onShutdown('tasks', () => deps.tasks.shutdown());
  // MCP connections close: stdio servers' processes end with Parley.
  deps.lifecycle.onShutdown('mcp', () => deps.mcp.close());

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
  log.info('listening', { url, database: database.where, ...(realtime.transport !== 'memory' ? { instance: instanceId, bus: realtime.transport } : {}) });
  deps.lifecycle.onShutdown('turn leases', startTurnKeeper(deps, { sweeps: [(d) => endInterruptedApiResponses(d, apiLog, 'orphan')] }));
  deps.lifecycle.onShutdown('group answer leases', startAnswerKeeper(deps));
  if (realtime.cluster) {
    const cluster = realtime.cluster;
    deps.lifecycle.onShutdown('credential relay', startCredentialRelay(deps));
    const groups = attachGroupRelay(deps, cluster);
    deps.lifecycle.onShutdown('group relay', cluster.onGap(() => groups.catchUp()));
  }
  // Documents an earlier run did not get to (stopped, or killed, mid-extraction).
  deps.fileText.wake();
  const stopPruning = startPruning(deps);
  deps.lifecycle.onShutdown('pruning', stopPruning);

  let stopping: Promise<void> | undefined;
  return {
    url,
    port: server.port!,
    deps,
    database: database.where,
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
        await realtime.close();
        await database.close();
        log.info('stopped');
      })()),
  };
}
