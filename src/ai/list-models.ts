import OpenAI from 'openai';
import type { Config } from '../config';
import { keyedFetch } from '../net/keyed-fetch';

/**
 * The models a client may name in `chat/stream`'s `model`: what the configured provider's
 * `GET /v1/models` lists, the configured chat model first. Asked at most once a minute per
 * configuration (a page load must not cost a request to the model server each time), with a
 * short timeout, and never an error: a server that does not answer, or has no such endpoint,
 * leaves the configured model alone.
 */
const CACHE_MS = 60_000;
const TIMEOUT_MS = 3000;
/** A model server with hundreds of models (OpenRouter) still makes a usable menu. */
const MAX_MODELS = 200;
/** Models of the list that do not chat: embeddings, speech, images, moderation, rerankers. */
const NOT_CHAT = /embed|whisper|tts|dall-e|moderation|transcribe|rerank/i;

type ModelList = { models: { id: string }[]; default: string };

// Per configuration object: each app (and each test's app) has its own.
const cache = new WeakMap<Config, { at: number; list: Promise<ModelList> }>();

async function askProvider(config: Config): Promise<ModelList> {
  const fallback = { models: [{ id: config.aiModel }], default: config.aiModel };
  if (config.aiProvider === 'none') return fallback;
  try {
    const client = new OpenAI({ apiKey: config.aiApiKey ?? 'none', baseURL: config.aiBaseUrl, maxRetries: 0, timeout: TIMEOUT_MS, fetch: keyedFetch() });
    const page = await client.models.list();
    const ids = page.data.map((m) => m.id).filter((id) => typeof id === 'string' && id && id !== config.aiModel && !NOT_CHAT.test(id));
    return { models: [config.aiModel, ...new Set(ids)].slice(0, MAX_MODELS).map((id) => ({ id })), default: config.aiModel };
  } catch {
    return fallback;
  }
}

export function listModels(config: Config, now = Date.now()): Promise<ModelList> {
  const hit = cache.get(config);
  if (hit && now - hit.at < CACHE_MS) return hit.list;
  const list = askProvider(config);
  cache.set(config, { at: now, list });
  return list;
}

