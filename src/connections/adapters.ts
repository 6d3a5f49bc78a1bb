import type { Config } from '../config';
import type { ConnectionRow } from '../db/schema';
import type { AiProvider } from '../ai/ai.types';
import { createChatProvider } from '../ai/openai-chat';
import { createResponsesProvider } from '../ai/openai-responses';
import { createSearxngSearch, type SearchProvider } from '../ai/search';
import { createCapabilities } from '../ai/capabilities';
import { createModelContextSource } from '../ai/model-context';
import { chatModelOf, optionsOf, researchModelOf } from './connection-options';
import { envConnections, OPENAI_BASE_URL } from './seed-env';

/**
 * A connection's adapter, one builder per kind (STYLE.md §18): the chat kinds implement
 * `AiProvider`; the embeddings, images and voice clients take the server's settings with the
 * connection's in their kind's fields, so the same client code serves an env row and an admin's.
 */

/** A row with its credential opened (in memory only, for the adapter's client). */
export interface OpenConnection {
  row: ConnectionRow;
  apiKey: string | undefined;
}

/** Pages read by the research loop: enough text to cite, small enough for a Raspberry Pi. */
const PAGE_MAX_BYTES = 512 * 1024;
const PAGE_TIMEOUT_MS = 10_000;

/** OpenAI's own API is not probed for llama-server's `/props` or Ollama's `/api/ps`. */
const probedUrl = (baseUrl: string) => (baseUrl === OPENAI_BASE_URL ? undefined : baseUrl);

const researchSettings = (config: Config) => ({
  breadth: config.researchBreadth,
  depth: config.researchDepth,
  page: { maxBytes: PAGE_MAX_BYTES, timeoutMs: PAGE_TIMEOUT_MS, allowPrivate: config.fetchAllowPrivate, allowHosts: config.fetchAllowHosts },
});

export function chatAdapter({ row, apiKey }: OpenConnection, config: Config, search: SearchProvider | undefined): AiProvider {
  const o = optionsOf(row);
  const model = chatModelOf(row);
  const researchModel = researchModelOf(row, config.researchModel);
  const common = { baseUrl: row.baseUrl, apiKey, model, researchModel };
  switch (row.api) {
    case 'openai-responses':
      return createResponsesProvider(common);
    case 'anthropic':
      throw new Error('an Anthropic connection is built by chatAdapterOf (its SDK is loaded when first used)');
    default: {
      const baseUrl = probedUrl(row.baseUrl);
      return createChatProvider({
        ...common,
        search,
        capabilities: createCapabilities({ tools: o.tools ?? config.aiTools, images: o.vision ?? config.aiVision }, baseUrl),
        idleTimeoutMs: (o.idleTimeoutS ?? config.aiIdleTimeoutS) * 1000,
        budget: { contexts: createModelContextSource({ baseUrl, apiKey, contextTokens: o.contextTokens ?? config.aiContextTokens }), answerTokens: o.answerTokens ?? config.aiAnswerTokens },
        research: researchSettings(config),
      });
    }
  }
}

/**
 * A chat connection's provider. Anthropic's SDK is loaded the first time an Anthropic connection
 * is used: a server without one does not carry it in memory (a 1 GB board counts its megabytes).
 */
export async function chatAdapterOf(c: OpenConnection, config: Config, search: SearchProvider | undefined): Promise<AiProvider> {
  if (c.row.api !== 'anthropic') return chatAdapter(c, config, search);
  const { createAnthropicProvider } = await import('../ai/anthropic-messages');
  const o = optionsOf(c.row);
  return createAnthropicProvider({
    baseUrl: c.row.baseUrl,
    apiKey: c.apiKey,
    model: chatModelOf(c.row),
    researchModel: researchModelOf(c.row, config.researchModel),
    thinkingTokens: o.thinkingTokens ?? 0,
    answerTokens: o.answerTokens || undefined,
    idleTimeoutMs: (o.idleTimeoutS ?? config.aiIdleTimeoutS) * 1000,
    search,
    research: researchSettings(config),
  });
}

export const searchAdapter = ({ row }: OpenConnection): SearchProvider => createSearxngSearch(row.baseUrl);

/**
 * The settings an embeddings, images or voice client reads, the connection's in its kind's
 * fields (an option left out keeps the environment's value, i.e. the setting's default).
 */
export function serviceSettings(open: OpenConnection, config: Config): Config {
  const settings = kindSettings(open, config);
  connectionOfSettings.set(settings, open.row);
  return settings;
}

/** Which connection a kind's settings came from (usage records name it and its model). */
const connectionOfSettings = new WeakMap<Config, ConnectionRow>();

/**
 * The connection and catalogue model id (`<connection>/<model>`) of a kind's settings, for usage
 * metering (src/usage/): settings not made from a connection name the model alone.
 */
export function serviceModelOf(settings: Config, kind: 'embeddings' | 'images' | 'stt' | 'tts'): { connectionId?: string; model: string } {
  const model = { embeddings: settings.embeddingsModel, images: settings.imagesModel, stt: settings.sttModel, tts: settings.ttsModel }[kind];
  const row = connectionOfSettings.get(settings);
  return row ? { connectionId: row.id, model: `${row.name}/${model}` } : { model };
}

/** A `video` connection as the video tool reads it (docs/video.md): its options, else the server's settings. */
export interface VideoService {
  connection: ConnectionRow;
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  seconds: number;
  timeoutS: number;
}

export function videoService({ row, apiKey }: OpenConnection, config: Config): VideoService {
  const o = optionsOf(row);
  return { connection: row, baseUrl: row.baseUrl, apiKey, model: o.model || config.videoModel, seconds: o.seconds ?? config.videoSeconds, timeoutS: o.timeoutS ?? config.videoTimeoutS };
}

function kindSettings({ row, apiKey }: OpenConnection, config: Config): Config {
  const o = optionsOf(row);
  switch (row.kind) {
    case 'embeddings':
      return {
        ...config,
        embeddingsBaseUrl: row.baseUrl,
        embeddingsApiKey: apiKey,
        embeddingsModel: o.model ?? config.embeddingsModel,
        embeddingsDimensions: o.dimensions ?? config.embeddingsDimensions,
        embeddingsBatch: o.batch ?? config.embeddingsBatch,
        embeddingsTimeoutS: o.timeoutS ?? config.embeddingsTimeoutS,
      };
    case 'images':
      return {
        ...config,
        imagesBaseUrl: row.baseUrl,
        imagesApiKey: apiKey,
        imagesModel: o.model ?? config.imagesModel,
        imagesSize: o.size ?? config.imagesSize,
        imagesTimeoutS: o.timeoutS ?? config.imagesTimeoutS,
      };
    case 'stt':
      return { ...config, sttBaseUrl: row.baseUrl, sttApiKey: apiKey, sttModel: o.model ?? config.sttModel, sttMaxBytes: o.maxBytes ?? config.sttMaxBytes };
    case 'tts':
      return { ...config, ttsBaseUrl: row.baseUrl, ttsApiKey: apiKey, ttsModel: o.model ?? config.ttsModel, ttsVoice: o.voice ?? config.ttsVoice, ttsMaxChars: o.maxChars ?? config.ttsMaxChars };
    default:
      return config;
  }
}

/**
 * The environment's chat connection as a provider, without a database: what `deps.connections`
 * resolves for an install configured by `PARLEY_AI_*` alone (tests of the providers, benches).
 */
export function providerFromEnv(config: Config): AiProvider | undefined {
  const env = envConnections(config);
  const chat = env.find((e) => e.kind === 'chat');
  if (!chat) return undefined;
  const search = env.find((e) => e.kind === 'search');
  const row = { ...chat, id: chat.name, credential: null, enabled: true, source: 'env', allowPrivate: true, createdAt: 0, updatedAt: 0, version: 1 } as ConnectionRow;
  return chatAdapter({ row, apiKey: chat.credential(config) }, config, search ? createSearxngSearch(search.baseUrl) : undefined);
}
