import type { TurnSandboxes } from './code/sandbox';
import type { Config } from './config';
import type { Db } from './db/connection';
import type { Store } from './db/work';
import type { Logger } from './log';
import type { Notifier } from './notifications/notifier';
import type { Connections } from './connections/resolver';
import type { TaskRunner } from './tasks/runner';
import type { EventLog } from './chat/event-log';
import type { PushClient } from './notifications/expo-client';
import type { Lifecycle } from './lifecycle';
import type { Bus } from './pubsub/bus';
import type { HeartbeatTicker } from './http/heartbeat-ticker';
import type { CredentialWatch } from './auth/credential-watch';
import type { OpacityGuess } from './images/opacity-guess';
import type { Turnstile } from './http/turnstile';
import type { GroupFanout } from './groups/group-fanout';
import type { BlobStorage } from './files/blob-storage';
import type { FileTextQueue } from './files/extract-pending';
import type { Usage } from './usage/usage.types';
import type { EmbeddingsIndex } from './files/embeddings-index';
import type { Mcp } from './mcp/mcp';
import type { ToolRegistry } from './tools/registry';

/**
 * Everything the app needs, built by the caller (server, test or CLI) and passed to createApp.
 * No module of Parley keeps state of its own.
 */
export interface AppDeps {
  config: Config;
  /**
   * The SQLite database, when Parley runs on one (undefined on PostgreSQL): only for what is
   * SQLite's own (backups). The domains use `store`.
   */
  db?: Db;
  /** The database, on SQLite or PostgreSQL alike, through the units of work (src/db/work.ts). */
  store: Store;
  /** This process's id among the instances sharing a database: what its leases are held by. */
  instanceId: string;
  log: Logger;
  /** Milliseconds since the epoch; tests pass a fake clock. */
  now: () => number;
  /** Push notifications (deep-research status); `noopNotifier` when push is not set up. */
  notifier: Notifier;
  /**
   * Every outside service (AI servers, embeddings, images, speech, search) as connection rows,
   * and the resolver from a model to its provider (`createConnections`, docs/connections.md).
   */
  connections: Connections;
  /** Background tasks (AI turns), with concurrency caps. */
  tasks: TaskRunner;
  /** Persisted, replayable events of AI responses and their live fan-out. */
  events: EventLog;
  /** Expo push client; undefined when push is disabled (`PARLEY_PUSH_ENABLED=false`). */
  push?: PushClient;
  /** Shutdown registry: `lifecycle.signal` aborts when the server stops; `onShutdown` hooks run then. */
  lifecycle: Lifecycle;
  /** The realtime topic broker (group chat events, AI responses' live events). */
  bus: Bus;
  /** Group events to the groups' open streams in batches: per turn of the event loop, at most every `PARLEY_GROUP_BATCH_MS` (`createGroupFanout`). */
  groupFanout: GroupFanout;
  /** Ends the open event streams of a credential that stops being valid (`createCredentialWatch`). */
  credentialWatch: CredentialWatch;
  /** The one heartbeat interval shared by every open event stream (`createHeartbeatTicker`). */
  heartbeats: HeartbeatTicker;
  /**
   * The work that holds much memory while it runs, at most `PARLEY_IMAGE_CONCURRENCY` at once; the
   * rest queue: image decodes (conversions, uploads, generated images) and document reads.
   */
  imageConversions: Turnstile;
  /** Transcriptions running at once (`PARLEY_STT_CONCURRENCY`); the others wait before their upload is read. */
  transcriptions: Turnstile;
  /** Whether the next RGBA image is likely opaque, so its encode may start early (`createOpacityGuess`). */
  imageOpacity: OpacityGuess;
  /** The code interpreter's sandboxes, one per turn that runs code (src/code/sandbox.ts). */
  sandboxes: TurnSandboxes;
  /** Where file contents live: the data directory, or an S3-compatible bucket (`createBlobStorage`). */
  files: BlobStorage;
  /** Documents into searchable text after their upload, one at a time (`createFileTextQueue`). */
  fileText: FileTextQueue;
  /** The sign bits of documents' vectors kept between semantic searches, within `PARLEY_EMBEDDINGS_INDEX_MB` (`createEmbeddingsIndex`). */
  embeddingsIndex: EmbeddingsIndex;
  /** Usage metering and quotas: every model call reserves before it goes upstream and settles after (src/usage/usage.types.ts). */
  usage: Usage;
  /** MCP servers' tools: connections per (server, user), the breaker, users' OAuth sessions (`createMcp`, docs/mcp.md). */
  mcp: Mcp;
  /** The tools the model may call, contributed by each domain (src/tools/; docs/architecture.md, "Tools"). */
  tools: ToolRegistry;
}
