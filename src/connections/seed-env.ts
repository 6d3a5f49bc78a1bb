import type { Config } from '../config';
import type { ConnectionRow } from '../db/schema';
import type { Tx, Work } from '../db/work';
import type { ConnectionOptions } from './connection-options';
import { deleteConnection, findConnection, insertConnectionOnce, listConnectionRows, updateConnectionRow } from './connection.store';

/** OpenAI's API, where an empty PARLEY_AI_BASE_URL has always pointed (the openai SDK's default). */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** A connection the environment settings describe; its credential stays in the environment. */
export interface EnvConnection {
  name: string;
  kind: ConnectionRow['kind'];
  api: string;
  baseUrl: string;
  options: ConnectionOptions;
  /** The setting holding its credential, read from the config whenever the adapter is built. */
  credential: (config: Config) => string | undefined;
}

/** Rows named so are the environment's: admins cannot take these names. */
export const ENV_PREFIX = 'env-';

/** Today's settings as connections (docs/connections.md, "Environment settings"). */
export function envConnections(config: Config): EnvConnection[] {
  const out: EnvConnection[] = [];
  if (config.aiProvider !== 'none')
    out.push({
      name: 'env-ai',
      kind: 'chat',
      api: config.aiProvider,
      baseUrl: config.aiBaseUrl || (config.aiProvider === 'anthropic' ? ANTHROPIC_BASE_URL : OPENAI_BASE_URL),
      options: {
        model: config.aiModel,
        researchModel: config.researchModel,
        tools: config.aiTools,
        vision: config.aiVision,
        contextTokens: config.aiContextTokens,
        answerTokens: config.aiAnswerTokens,
        idleTimeoutS: config.aiIdleTimeoutS,
      },
      credential: (c) => c.aiApiKey,
    });
  if (config.embeddingsBaseUrl)
    out.push({
      name: 'env-embeddings',
      kind: 'embeddings',
      api: 'openai',
      baseUrl: config.embeddingsBaseUrl,
      options: { model: config.embeddingsModel, dimensions: config.embeddingsDimensions, batch: config.embeddingsBatch, timeoutS: config.embeddingsTimeoutS },
      credential: (c) => c.embeddingsApiKey,
    });
  if (config.imagesBaseUrl)
    out.push({
      name: 'env-images',
      kind: 'images',
      api: 'openai',
      baseUrl: config.imagesBaseUrl,
      options: { model: config.imagesModel, size: config.imagesSize, timeoutS: config.imagesTimeoutS },
      credential: (c) => c.imagesApiKey,
    });
  if (config.sttBaseUrl)
    out.push({ name: 'env-stt', kind: 'stt', api: 'openai', baseUrl: config.sttBaseUrl, options: { model: config.sttModel, maxBytes: config.sttMaxBytes }, credential: (c) => c.sttApiKey });
  if (config.ttsBaseUrl)
    out.push({
      name: 'env-tts',
      kind: 'tts',
      api: 'openai',
      baseUrl: config.ttsBaseUrl,
      options: { model: config.ttsModel, voice: config.ttsVoice, maxChars: config.ttsMaxChars },
      credential: (c) => c.ttsApiKey,
    });
  if (config.searchProvider === 'searxng' && config.searxngUrl)
    out.push({ name: 'env-search', kind: 'search', api: 'searxng', baseUrl: config.searxngUrl, options: {}, credential: () => undefined });
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Make the `env-*` rows match the settings: added when new, updated (version bumped) when the
 * environment changed, removed when it no longer sets them. Whether one is enabled is the
 * admin's, and kept. Returns whether anything changed (the caller tells the other instances).
 */
export function* seedEnvConnections(tx: Tx, config: Config, now: number): Work<boolean> {
  const wanted = envConnections(config);
  let changed = false;
  for (const env of wanted) {
    const row = yield* findConnection(tx, env.name);
    const values = { kind: env.kind, api: env.api, baseUrl: env.baseUrl, options: env.options as Record<string, unknown> };
    if (!row) {
      changed = (yield* insertConnectionOnce(tx, { ...values, name: env.name, credential: null, enabled: true, source: 'env', allowPrivate: true }, now)) || changed;
    } else if (row.source === 'env' && (row.api !== env.api || row.baseUrl !== env.baseUrl || row.kind !== env.kind || !same(row.options, values.options))) {
      yield* updateConnectionRow(tx, row.id, { api: env.api, baseUrl: env.baseUrl, options: values.options }, now);
      changed = true;
    }
  }
  const names = new Set(wanted.map((w) => w.name));
  for (const row of yield* listConnectionRows(tx))
    if (row.source === 'env' && !names.has(row.name)) {
      yield* deleteConnection(tx, row.id);
      changed = true;
    }
  return changed;
}
