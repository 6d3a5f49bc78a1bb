import OpenAI from 'openai';
import type { Config } from '../config';
import { fetchWithoutBunTimeout } from '../ai/upstream';
import { decodeVector, normaliseVector } from './embeddings-vectors';
import { keyedFetch, refusedRedirectMessage, refusedRedirectOf } from '../net/keyed-fetch';
import type { CallUsage } from '../ai/ai.types';
import { estimatedUsage, reportedUsage } from '../ai/call-usage';

/**
 * A failure of the embeddings server, said safely: `message` may be shown to a user (what went
 * wrong and the HTTP status, never the server's own text, its address or the key); `detail` is for
 * the operator's log. `refused`: the server turned the input itself down (a 400, 413 or 422), so
 * sending the same text again will not help.
 */
export class EmbeddingsError extends Error {
  constructor(
    message: string,
    readonly detail?: string,
    readonly refused = false,
  ) {
    super(message);
    this.name = 'EmbeddingsError';
  }
}

// One client per configuration object (each app, each test's app, has its own).
const clients = new WeakMap<Config, OpenAI>();

export const embeddingsEnabled = (config: Config): boolean => !!config.embeddingsBaseUrl;

/**
 * What a stored vector is labelled with: the model, and the length asked for when one is. Vectors
 * of another label are never compared with this one's, and are embedded again in the background.
 */
export const embeddingModelKey = (config: Config): string =>
  config.embeddingsDimensions ? `${config.embeddingsModel}#${config.embeddingsDimensions}` : config.embeddingsModel;

function embeddingsClient(config: Config): OpenAI {
  if (!config.embeddingsBaseUrl) throw new EmbeddingsError('Semantic search is not set up on this server (PARLEY_EMBEDDINGS_BASE_URL).');
  let client = clients.get(config);
  // No retries here: the fill pass tries again later, and a search falls back to full text.
  if (!client) {
    client = new OpenAI({ apiKey: config.embeddingsApiKey ?? 'none', baseURL: config.embeddingsBaseUrl, maxRetries: 0, fetch: keyedFetch(fetchWithoutBunTimeout) });
    clients.set(config, client);
  }
  return client;
}

/**
 * The texts' vectors, in their order, each scaled to length 1, through
 * `POST <PARLEY_EMBEDDINGS_BASE_URL>/embeddings`. Base64 is asked for (a quarter of the bytes of
 * JSON numbers, and what the SDK asks for by default), and named explicitly so that the answer
 * comes back undecoded: servers that ignore the parameter and answer numbers (some versions of
 * Ollama and LM Studio) are read as well, where the SDK's own decoding would garble them.
 */
export async function embedTexts(
  config: Config,
  texts: string[],
  opts: { timeoutMs?: number; signal?: AbortSignal; onUsage?: (usage: CallUsage) => void } = {},
): Promise<Float32Array[]> {
  if (!texts.length) return [];
  const client = embeddingsClient(config);
  const timeoutMs = opts.timeoutMs ?? config.embeddingsTimeoutS * 1000;
  let answer: OpenAI.CreateEmbeddingResponse;
  try {
    answer = await client.embeddings.create(
      {
        model: config.embeddingsModel,
        input: texts,
        encoding_format: 'base64',
        ...(config.embeddingsDimensions ? { dimensions: config.embeddingsDimensions } : {}),
      },
      { timeout: timeoutMs, signal: opts.signal },
    );
  } catch (err) {
    throw describeEmbeddingsError(err, timeoutMs);
  }
  const vectors = readVectors(answer, texts.length, config.embeddingsDimensions);
  // What the server reports (`usage.prompt_tokens`), or the texts counted.
  opts.onUsage?.(reportedUsage((answer as { usage?: unknown }).usage) ?? estimatedUsage(texts, ''));
  return vectors;
}

function readVectors(answer: unknown, count: number, dimensions: number): Float32Array[] {
  const data = (answer as { data?: unknown })?.data;
  const bad = (why: string) => new EmbeddingsError('The embeddings server answered something Parley cannot use.', why);
  if (!Array.isArray(data) || data.length !== count) throw bad(`expected ${count} embeddings, got ${Array.isArray(data) ? data.length : typeof data}`);
  const out: Float32Array[] = new Array(count);
  data.forEach((item: { index?: unknown; embedding?: unknown }, i) => {
    const index = typeof item?.index === 'number' ? item.index : i;
    const raw = item?.embedding;
    const vector = typeof raw === 'string' ? decodeVector(raw) : Array.isArray(raw) ? Float32Array.from(raw as number[]) : undefined;
    if (!vector || !vector.length || index < 0 || index >= count || out[index]) throw bad(`embedding ${i}: not a vector, or its index repeated or out of range`);
    if (!vector.every(Number.isFinite)) throw bad(`embedding ${i}: not finite numbers`);
    out[index] = normaliseVector(vector);
  });
  const dims = out[0]!.length;
  if (out.some((v) => v.length !== dims)) throw bad('embeddings of different lengths in one answer');
  if (dimensions && dims !== dimensions) throw bad(`asked for ${dimensions} dimensions, got ${dims}`);
  return out;
}

/** What the server's failure means, safely (`EmbeddingsError`). */
function describeEmbeddingsError(err: unknown, timeoutMs: number): EmbeddingsError {
  if (err instanceof EmbeddingsError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new EmbeddingsError(`The embeddings server did not answer within ${Math.round(timeoutMs / 1000)} seconds.`, detail);
  if (err instanceof OpenAI.APIUserAbortError) return new EmbeddingsError('The embeddings request was cancelled.', detail);
  const redirect = refusedRedirectOf(err);
  if (redirect) return new EmbeddingsError(refusedRedirectMessage('The embeddings server', 'PARLEY_EMBEDDINGS_BASE_URL'), redirect.message);
  if (err instanceof OpenAI.APIConnectionError) return new EmbeddingsError('The embeddings server could not be reached.', detail);
  if (!(err instanceof OpenAI.APIError) || !err.status) return new EmbeddingsError('The embeddings server failed.', detail);
  const status = err.status;
  const say = (what: string, refused = false) => new EmbeddingsError(`${what} (HTTP ${status}).`, detail, refused);
  if (status === 401 || status === 403) return say("The embeddings server refused Parley's API key");
  if (status === 404) return say('The embeddings server does not know this model or offers no embeddings');
  if (status === 429) return say('The embeddings server is busy or over its limit');
  if (status === 400 || status === 413 || status === 422) return say('The embeddings server refused the text', true);
  if (status >= 500) return say('The embeddings server failed with a server error');
  return say('The embeddings server refused the request');
}
