import type { ConnectionRow } from '../db/schema';
import { AiError } from '../ai/ai.types';
import { fetchWithoutBunTimeout, IdleLimit, refusalOf } from '../ai/upstream';
import { parseSseBatches } from '../ai/sse-parse';
import { keyedFetch, refusedRedirectMessage, refusedRedirectOf } from '../net/keyed-fetch';
import { OpenAiError } from '../http/errors';
import type { ChatChunk, ChatRequest } from './chat-request';
import type { V1Assistant } from './v1-assistants';

/**
 * How the `/v1` door reaches a chat connection: one request of the caller's, sent as that
 * connection's API takes it (upstream-openai-chat.ts passes it through, upstream-anthropic.ts and
 * upstream-responses.ts translate), read back as Chat Completions chunks. Plain `fetch` through
 * `keyedFetch` (the key goes to the configured origin only) and Parley's SSE reader: no SDK on
 * the path of every token.
 */
export interface V1Target {
  /** The catalogue id (`<connection>/<model>`): what the caller is answered with. */
  id: string;
  /** The upstream model id. */
  model: string;
  connection: ConnectionRow;
  apiKey: string | undefined;
  /** PARLEY_AI_IDLE_TIMEOUT_S, or the connection's `idleTimeoutS`, in milliseconds. */
  idleTimeoutMs: number;
  /** The connection's `answerTokens` (what an Anthropic request sends when the caller set no limit). */
  answerTokens: number | undefined;
  /** The assistant the caller named (`assistant:<id>`): its instructions go first, its id on the usage row. */
  assistant?: V1Assistant;
}

/** The upstream's answer as chunks, grouped as they arrived (one array per network read). */
export type ChunkBatches = AsyncGenerator<ChatChunk[]>;

const upstreamFetch = keyedFetch(fetchWithoutBunTimeout);

/** How long an upstream's error body is read, at most, for its message. */
const ERROR_TEXT_CHARS = 500;

export const joinUrl = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;

/**
 * POST a JSON body and return the response once it answered 2xx; an OpenAiError saying what the
 * upstream's status means otherwise (`describe`: its error body → message). `idle` bounds the
 * wait for the answer and is handed on to the reader.
 */
export async function postUpstream(url: string, headers: Record<string, string>, body: unknown, idle: IdleLimit, signal: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await upstreamFetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: idle.signal });
  } catch (err) {
    idle.stop();
    throw unreachable(err, idle, signal);
  }
  if (res.ok) return res;
  idle.stop();
  throw await refusal(res);
}

function unreachable(err: unknown, idle: IdleLimit, signal: AbortSignal): unknown {
  if (signal.aborted) return err;
  if (idle.fired) return new OpenAiError(504, idle.describe(err, signal).message, 'server_error');
  const redirect = refusedRedirectOf(err);
  if (redirect) return new OpenAiError(502, refusedRedirectMessage('The AI provider', "its connection's base URL"), 'server_error');
  return new OpenAiError(502, 'The AI provider could not be reached.', 'server_error');
}

/**
 * An upstream's refusal in OpenAI's shape (docs/openai-api.md, "Errors"): its status where the
 * caller can act on it (a request refused: 400, a model it does not know: 404, busy: 429 with its
 * Retry-After), 502 where the server's admin must (the connection's key refused, a server error).
 * The upstream's own message is quoted (masked, and cut at 500 characters) except for a refused
 * key: a developer calling `/v1` needs "tools param requires --jinja flag" to act on it.
 */
async function refusal(res: Response): Promise<OpenAiError> {
  const text = (await res.text().catch(() => '')).slice(0, ERROR_TEXT_CHARS * 4);
  const said = upstreamMessage(text).slice(0, ERROR_TEXT_CHARS);
  const status = res.status;
  const sentence = `${refusalOf(status, said)} (HTTP ${status})`;
  const quoted = said ? `${sentence}: ${said}` : `${sentence}.`;
  if (status === 401 || status === 403) return new OpenAiError(502, `${sentence}. The server's admin sets the connection's credential again.`, 'server_error');
  if (status === 429) {
    const retryAfter = res.headers.get('retry-after');
    return new OpenAiError(429, quoted, 'requests', 'rate_limit_exceeded', null, retryAfter ? { 'retry-after': retryAfter } : {});
  }
  if (status === 404) return new OpenAiError(404, quoted, 'invalid_request_error', 'model_not_found', 'model');
  if (status >= 400 && status < 500) return new OpenAiError(400, quoted, 'invalid_request_error');
  return new OpenAiError(502, quoted, 'server_error');
}

/** The message of an error body in the shapes servers use (OpenAI's, Anthropic's, llama.cpp's, plain text). */
function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text);
    const m = body?.error?.message ?? body?.message ?? body?.detail ?? body?.error;
    if (typeof m === 'string') return m;
  } catch {
    // Not JSON: the text itself.
  }
  return text.trim();
}

/**
 * The events of an upstream's event stream, each network read's together, under the idle limit;
 * `map` turns each batch of the upstream's events into chunks. A failure while reading is thrown
 * as an AiError with a sentence the caller may show.
 */
export async function* readUpstream(res: Response, idle: IdleLimit, signal: AbortSignal, map: (events: any[]) => ChatChunk[]): ChunkBatches {
  try {
    for await (const events of parseSseBatches(res.body, idle.signal)) {
      idle.touch();
      const chunks = map(events);
      if (chunks.length) yield chunks;
    }
    if (idle.fired) throw idle.describe(undefined, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw err instanceof AiError ? err : idle.describe(err, signal);
  } finally {
    idle.stop();
  }
}

/**
 * The chunks of an answer a translation makes (upstream-anthropic.ts, upstream-responses.ts): one
 * id and creation time for all of them, the role said by the first.
 */
export class ChunkMaker {
  id = `chatcmpl-${crypto.randomUUID()}`;
  readonly created = nowSeconds();
  private started = false;

  constructor(private readonly model: string) {}

  delta(delta: ChatChunk['choices'][number]['delta'], finish: string | null = null): ChatChunk {
    if (!this.started) {
      this.started = true;
      delta = { role: 'assistant', ...delta };
    }
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  /** The usage-only chunk that ends a stream (`stream_options.include_usage`). */
  usage(usage: { input: number; output: number; cached?: number; reasoning?: number }): ChatChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
        prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
        completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
      },
    };
  }
}

/** Seconds since the epoch, as OpenAI's `created` fields say it. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);

export type OpenStream = (target: V1Target, req: ChatRequest, signal: AbortSignal) => Promise<ChunkBatches>;
