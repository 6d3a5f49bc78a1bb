/**
 * What Parley knows of the model server's context window and how it counts tokens, for the
 * context budget (fit-context.ts). Asked lazily on a model's first turn and again after a minute
 * (a model server restarted with a larger context, an Ollama model loaded since), never on every
 * turn:
 *
 * - `PARLEY_AI_CONTEXT_TOKENS` set: that size, whatever the server says.
 * - llama.cpp's llama-server: `GET /props` gives the slot's `n_ctx`; tokens are counted exactly,
 *   by the server itself: `POST /apply-template` renders the request through the model's chat
 *   template and `POST /tokenize` counts the result. Or, once a request's shape is learned,
 *   bounded without asking (bound-request.ts).
 * - vLLM: `GET /v1/models` gives `max_model_len`.
 * - Ollama (`GET /api/version` answers): it runs a model at its own `num_ctx`, not the model's
 *   length, and cuts an over-long prompt from the front (system message first) instead of
 *   refusing it. So the budget is what it runs at: the loaded model's `context_length` in
 *   `/api/ps`, else 2,048, the smallest default Ollama has shipped.
 * - Anything else (OpenAI and other hosted APIs, with windows of 128k and more): no budget unless
 *   configured.
 *
 * Without a tokenizer on the server, tokens are estimated on the safe side (estimateTokens).
 */
import { IMAGE_TOKENS, estimateTokens, type TokenCounter } from './count-tokens';
import { keyedFetch } from '../net/keyed-fetch';
import { createRequestBounds } from './bound-request';

export type ServerKind = 'llama.cpp' | 'ollama' | 'vllm' | 'other';

export interface ModelContext {
  kind: ServerKind;
  /** The context window in tokens (prompt and answer together); undefined: unknown, no budget. */
  contextTokens?: number;
  /** Where the window's size came from, for `parley doctor`. */
  source: string;
  counter: TokenCounter;
  /** Learned by the budget: how much more than its estimate a history turn costs in this template. */
  historyScale?: number;
}

export interface ModelContextSource {
  /** What is known for `model` now (cached; asked again after REFRESH_MS). */
  get(model: string): Promise<ModelContext>;
}

/** Ollama's default `num_ctx` was 2,048 for years and is 4,096 or more in newer releases: the safe side. */
export const OLLAMA_DEFAULT_CONTEXT = 2048;
/** A probe must not hold up a turn: a server that does not answer quickly is asked nothing. */
const PROBE_TIMEOUT_MS = 2000;
const REFRESH_MS = 60_000;
const RETRY_MS = 10_000;

export interface ModelContextSettings {
  baseUrl?: string;
  apiKey?: string;
  /** PARLEY_AI_CONTEXT_TOKENS; 0: ask the server. */
  contextTokens: number;
}

export function createModelContextSource(settings: ModelContextSettings): ModelContextSource {
  // `known`: the window was learned. Until it is (a server down or busy at the first probe) it is asked again sooner.
  const cache = new Map<string, { at: number; context: Promise<ModelContext>; known?: boolean }>();
  const server = settings.baseUrl ? serverOf(settings.baseUrl, settings.apiKey) : undefined;
  // One tokenizer cache for the process: a conversation's older turns are counted once.
  const exact = server ? llamaCounters(server) : undefined;
  const probe = async (model: string): Promise<ModelContext> => {
    const found: Found = server ? await probeServer(server, model) : { kind: 'other', source: 'not said by the server' };
    const counter = found.kind === 'llama.cpp' && exact ? exact(found.template ?? '') : estimateCounter;
    if (settings.contextTokens) return { kind: found.kind, contextTokens: settings.contextTokens, source: 'PARLEY_AI_CONTEXT_TOKENS', counter };
    return { ...found, counter };
  };
  return {
    get(model) {
      const hit = cache.get(model);
      if (hit && Date.now() - hit.at >= (hit.known ? REFRESH_MS : RETRY_MS)) {
        // Stale: asked again in the background, so no turn waits for the probe; what the budget
        // learned of the template stays while the window is the same.
        hit.at = Date.now();
        void Promise.all([hit.context, probe(model)]).then(([old, fresh]) => {
          // A probe that learned less (the server restarting, busy, slow to answer) keeps what was known.
          if (old.contextTokens && !fresh.contextTokens) return;
          if (fresh.contextTokens === old.contextTokens && fresh.kind === old.kind) fresh = { ...fresh, historyScale: old.historyScale };
          cache.set(model, { at: Date.now(), context: Promise.resolve(fresh), known: !!fresh.contextTokens });
        });
      }
      if (hit) return hit.context;
      const entry: { at: number; context: Promise<ModelContext>; known?: boolean } = { at: Date.now(), context: probe(model) };
      void entry.context.then((c) => (entry.known = !!c.contextTokens));
      cache.set(model, entry);
      return entry.context;
    },
  };
}

interface Server {
  /** The server's root: the API base without its `/v1`. */
  root: string;
  apiBase: string;
  headers: Record<string, string>;
}

function serverOf(baseUrl: string, apiKey: string | undefined): Server {
  const apiBase = baseUrl.replace(/\/+$/, '');
  return { apiBase, root: apiBase.replace(/\/v1$/, ''), headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} };
}

async function getJson(server: Server, url: string, init?: RequestInit): Promise<any> {
  try {
    const res = await keyedFetch()(url, { ...init, headers: { ...server.headers, ...(init?.body ? { 'content-type': 'application/json' } : {}) }, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return res.ok ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}

const positive = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

type Found = Pick<ModelContext, 'kind' | 'contextTokens' | 'source'> & {
  /** llama-server's model and chat template, as one hash: what a request's rendering depends on. */
  template?: string;
};

async function probeServer(server: Server, model: string): Promise<Found> {
  const props = await getJson(server, `${server.root}/props`);
  const nCtx = positive(props?.default_generation_settings?.n_ctx);
  if (nCtx) {
    const template = String(Bun.hash(JSON.stringify([props.model_path, props.chat_template, props.bos_token, props.eos_token, props.build_info])));
    return { kind: 'llama.cpp', contextTokens: nCtx, source: 'llama-server /props', template };
  }
  const ollama = await getJson(server, `${server.root}/api/version`);
  if (typeof ollama?.version === 'string') {
    const ps = await getJson(server, `${server.root}/api/ps`);
    const loaded = (ps?.models ?? []).find((m: any) => m?.name === model || m?.model === model || m?.name === `${model}:latest`);
    const running = positive(loaded?.context_length);
    if (running) return { kind: 'ollama', contextTokens: running, source: 'Ollama /api/ps, the loaded model' };
    return { kind: 'ollama', contextTokens: OLLAMA_DEFAULT_CONTEXT, source: 'Ollama with the model not loaded: its smallest default, assumed' };
  }
  const models = await getJson(server, `${server.apiBase}/models`);
  const card = (models?.data ?? []).find((m: any) => m?.id === model);
  const maxLen = positive(card?.max_model_len);
  if (maxLen) return { kind: 'vllm', contextTokens: maxLen, source: 'vLLM /v1/models' };
  return { kind: 'other', source: 'not said by the server' };
}

const estimateCounter: TokenCounter = {
  exact: false,
  countText: async (text) => estimateTokens(text),
  async countRequest(messages, tools) {
    return estimateRequest(messages, tools);
  },
};

/** Tokens of a request from its text alone: every message's content, images, and the tools' JSON. */
function estimateRequest(messages: unknown[], tools: unknown[]): number {
  let n = 16;
  for (const m of messages as { content?: unknown; tool_calls?: unknown }[]) {
    n += 8 + (m.tool_calls ? estimateTokens(JSON.stringify(m.tool_calls)) : 0);
    if (typeof m.content === 'string') n += estimateTokens(m.content);
    else if (Array.isArray(m.content)) for (const part of m.content) n += part?.type === 'text' ? estimateTokens(String(part.text ?? '')) : IMAGE_TOKENS;
  }
  return n + (tools.length ? estimateTokens(JSON.stringify(tools)) : 0);
}

/** Text tokens remembered per text (by hash), so a long conversation's history is counted once. */
const TEXT_CACHE_ENTRIES = 4096;

/**
 * llama-server's own count. The template is applied to the request with its images replaced by a
 * short text (counted as IMAGE_TOKENS each: their true cost depends on the projector). The
 * rendering is the one a chat request gets, tools included (a template that renders no tools
 * costs none: measured, its prompt_tokens match). A server that cannot answer (an older build
 * without `/apply-template`, a template that refuses the shape) is estimated instead. One counter
 * a template (`template`, from /props), all sharing what they learned of texts and frames.
 */
function llamaCounters(server: Server): (template: string) => TokenCounter {
  const texts = new Map<bigint | number, number>();
  const tokenize = async (content: string, special: boolean): Promise<number | undefined> => {
    const body = await getJson(server, `${server.root}/tokenize`, { method: 'POST', body: JSON.stringify({ content, add_special: special, parse_special: special }) });
    return Array.isArray(body?.tokens) ? body.tokens.length : undefined;
  };
  const applyTemplate = async (messages: unknown[], tools: unknown[]): Promise<string | undefined> => {
    const rendered = await getJson(server, `${server.root}/apply-template`, { method: 'POST', body: JSON.stringify({ messages, ...(tools.length ? { tools } : {}) }) });
    return typeof rendered?.prompt === 'string' ? rendered.prompt : undefined;
  };
  const bounds = createRequestBounds(applyTemplate);
  const countText = async (text: string): Promise<number> => {
    if (!text) return 0;
    const key = Bun.hash(text);
    const hit = texts.get(key);
    if (hit !== undefined) return hit;
    const n = await tokenize(text, false);
    if (n === undefined) return estimateTokens(text);
    if (texts.size >= TEXT_CACHE_ENTRIES) texts.delete(texts.keys().next().value!);
    texts.set(key, n);
    return n;
  };
  return (template) => ({
    exact: true,
    countText,
    async countRequest(messages, tools) {
      const { plain, images } = textOnly(messages);
      const prompt = await applyTemplate(plain, tools);
      const n = prompt === undefined ? undefined : await tokenize(prompt, true);
      if (n === undefined) return estimateRequest(messages, tools);
      return n + images * IMAGE_TOKENS;
    },
    boundRequest(messages, tools) {
      const { plain, images } = textOnly(messages);
      const bound = bounds.bound(template, plain, tools);
      return bound === undefined ? undefined : bound + images * IMAGE_TOKENS;
    },
    expectRequest(messages, tools) {
      bounds.learn(template, textOnly(messages).plain, tools);
    },
  });
}

/** The messages with each image replaced by a short text, and how many there were. */
function textOnly(messages: unknown[]): { plain: unknown[]; images: number } {
  let images = 0;
  const plain = (messages as { content?: unknown }[]).map((m) => {
    if (!Array.isArray(m.content)) return m;
    const text = m.content.map((p: any) => (p?.type === 'text' ? String(p.text ?? '') : (images++, '[image]'))).join('\n');
    return { ...m, content: text };
  });
  return { plain, images };
}
