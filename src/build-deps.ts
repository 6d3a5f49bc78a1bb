import type { Config } from './config';
import type { Db } from './db/connection';
import type { Logger } from './log';
import type { AppDeps } from './deps';
import { noopNotifier } from './notifications/notifier';
import { createExpoNotifier } from './notifications/research-push';
import { createConnections } from './connections/resolver';
import { createTaskRunner } from './tasks/runner';
import { EventLog } from './chat/event-log';
import { createMemoryBus } from './pubsub/bus';
import { createLifecycle } from './lifecycle';
import { createHeartbeatTicker } from './http/heartbeat-ticker';
import { createCredentialWatch } from './auth/credential-watch';
import { createOpacityGuess } from './images/opacity-guess';
import { createTurnstile } from './http/turnstile';
import { createGroupFanout } from './groups/group-fanout';
import { createBlobStorage } from './files/blob-storage';
import { createEmbeddingsIndex } from './files/embeddings-index';
import { createFileTextQueue } from './files/extract-pending';
import { sqliteStore } from './db/store';
import type { Store } from './db/work';
import { newId } from './ids';
import { createUsage } from './usage/metering';
import { createMcp } from './mcp/mcp';
import { createToolRegistry } from './tools/registry';
import type { ToolSource } from './tools/tool.types';
import { memoryToolSource } from './memory/memory.tools';
import { fileToolSource } from './files/file.tools';
import { imageToolSource } from './files/image.tools';
import { videoToolSource } from './video/video.tools';
import { canvasToolSource } from './widgets/canvas.tool';
import { historyToolSource } from './chat/history.tools';
import { webSearchToolSource } from './ai/web-search-tool';
import { mcpToolSource } from './mcp/mcp.tools';

/**
 * Parley's own tool sources, in the order their tools are offered (src/tools/). A domain that
 * adds tools adds its source here.
 */
export const builtinToolSources: readonly ToolSource[] = [memoryToolSource, fileToolSource, imageToolSource, videoToolSource, canvasToolSource, historyToolSource, webSearchToolSource, mcpToolSource];

/**
 * Assemble the app's dependencies from the config, the open database and the logger: the one
 * place a new dependency is added, for the server and the tests alike. A test replaces a part by
 * passing it (a fake clock, a recording notifier); what is passed is used as is and the default is
 * not built. Push is on when a push client is passed (the server builds it from the config).
 */
export function buildDeps(base: { config: Config; log: Logger } & ({ db: Db } | { store: Store }) & Partial<AppDeps>): AppDeps {
  const { config, db, log } = base;
  const store = base.store ?? sqliteStore(db!);
  const now = base.now ?? Date.now;
  const lifecycle = base.lifecycle ?? createLifecycle();
  const bus = base.bus ?? createMemoryBus((topic, err) => log.error('bus listener failed', { topic, cause: String(err) }));
  const instanceId = base.instanceId ?? newId();
  const files = base.files ?? createBlobStorage(config);
  const connections = base.connections ?? createConnections({ config, store, bus, now, instanceId });
  // One turnstile for the work that holds much memory: image decodes and document reads.
  const imageConversions = base.imageConversions ?? createTurnstile(config.imageConcurrency);
  // Every model call reserves and records through it (src/usage/, docs/usage.md).
  const usage = base.usage ?? createUsage({ store, bus, now, instanceId, log });
  return {
    ...base,
    store,
    instanceId,
    now,
    lifecycle,
    notifier: base.notifier ?? (base.push ? createExpoNotifier({ store, log, push: base.push, config }) : noopNotifier),
    connections,
    tasks: base.tasks ?? createTaskRunner({ maxPerUser: config.researchMaxPerUser, maxTotal: config.researchMaxTotal, log }),
    bus,
    events: base.events ?? new EventLog(store, now, bus),
    groupFanout:
      base.groupFanout ??
      createGroupFanout(bus, { batchMs: config.groupBatchMs, onMemberError: (groupId, err) => log.error('group stream failed', { groupId, cause: String(err) }) }),
    // Stops with the lifecycle above, whichever one that is.
    heartbeats: base.heartbeats ?? createHeartbeatTicker(config.sseHeartbeatSeconds * 1000, lifecycle),
    // Checked as often as the heartbeats go: another process's revocation reaches open streams within a tick.
    credentialWatch: base.credentialWatch ?? createCredentialWatch(store, { intervalMs: config.sseHeartbeatSeconds * 1000, now, log, lifecycle }),
    imageConversions,
    transcriptions: base.transcriptions ?? createTurnstile(config.sttConcurrency),
    imageOpacity: base.imageOpacity ?? createOpacityGuess(),
    // Touches nothing until the first upload: a server without files makes no directory.
    files,
    fileText: base.fileText ?? createFileTextQueue({ config, store, files, log, now, instanceId, lifecycle, imageConversions, connections, usage }),
    embeddingsIndex: base.embeddingsIndex ?? createEmbeddingsIndex(config.embeddingsIndexMb * 2 ** 20),
    usage,
    // Connects nothing until a turn, a test or an operation asks for a server.
    mcp: base.mcp ?? createMcp({ config, store, sealer: connections.sealer, log, now, instanceId }),
    tools: base.tools ?? createToolRegistry(builtinToolSources),
  };
}
