import { readServerProps, type Capability, type CapabilitySetting } from '../ai/capabilities';
import type { Check } from './checks';
import { createModelContextSource } from '../ai/model-context';
import { answerRoom } from '../ai/fit-context';
import { keyedFetch } from '../net/keyed-fetch';

/** A 1×1 PNG: the smallest image a vision model can be asked about. */
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
/** A probe may make a small model load and read a prompt: slower than a model list. */
const PROBE_TIMEOUT_MS = 20_000;
/** Of a refusal's text, what a terminal line holds. */
const REASON_CHARS = 120;

const PROBES: Record<Capability, Record<string, unknown>> = {
  tools: {
    messages: [{ role: 'user', content: 'Say OK.' }],
    tools: [{ type: 'function', function: { name: 'probe', description: 'Does nothing.', parameters: { type: 'object', properties: {} } } }],
  },
  images: { messages: [{ role: 'user', content: [{ type: 'text', text: 'Say OK.' }, { type: 'image_url', image_url: { url: PIXEL } }] }] },
};

const FIX: Record<Capability, string> = {
  tools: 'llama-server: start it with --jinja and a chat template that has tools; Ollama: a model with tool support. Or PARLEY_AI_TOOLS=off',
  images: 'llama-server: start it with --mmproj (the model\'s multimodal projector); Ollama: a vision model. Or PARLEY_AI_VISION=off',
};

export interface CapabilityTarget {
  provider?: string;
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  settings: Record<Capability, CapabilitySetting | undefined>;
  /** PARLEY_AI_CONTEXT_TOKENS and PARLEY_AI_ANSWER_TOKENS. */
  contextTokens?: number;
  answerTokens?: number;
}

/** The context budget the turns will get (docs/ai-providers.md, "Context budget"): the window, where it came from, how tokens are counted. */
export async function probeContextWindow(t: CapabilityTarget): Promise<Check> {
  const name = 'AI context window';
  if (t.provider !== 'openai-chat') return { name, status: 'skip', detail: 'only for PARLEY_AI_PROVIDER=openai-chat (OpenAI budgets itself: truncation auto)' };
  const context = await createModelContextSource({ baseUrl: t.baseUrl, apiKey: t.apiKey, contextTokens: t.contextTokens ?? 0 }).get(t.model ?? '');
  const size = context.contextTokens;
  if (!size) return { name, status: 'ok', detail: `unknown (${context.source}): the history is sent whole`, fix: 'for a local model server, set PARLEY_AI_CONTEXT_TOKENS to its context size' };
  const counted = context.counter.exact ? "counted by the server's tokenizer" : 'estimated (3 bytes a token)';
  const detail = `${size} tokens (${context.source}), ${counted}; ${answerRoom(size, t.answerTokens ?? 0)} kept for the answer`;
  if (context.kind === 'ollama' && context.source.includes('assumed'))
    return { name, status: 'warn', detail, fix: 'set PARLEY_AI_CONTEXT_TOKENS to Ollama\'s OLLAMA_CONTEXT_LENGTH (docs/ai-providers.md, "Ollama")' };
  return { name, status: 'ok', detail };
}

/**
 * What the configured Chat Completions server accepts: one tiny request with a tool and one with
 * a 1×1 image (at most one token answered each), and llama-server's `/props` where it has one.
 * On `auto` a refusal is a warning (Parley leaves them out and says so); on `on` it is a failure,
 * since every turn would be refused.
 */
export async function probeCapabilities(t: CapabilityTarget): Promise<Check> {
  const name = 'AI capabilities';
  if (t.provider !== 'openai-chat') return { name, status: 'skip', detail: 'only for PARLEY_AI_PROVIDER=openai-chat' };
  const asked = (['tools', 'images'] as const).filter((c) => t.settings[c] !== 'off');
  if (!asked.length) return { name, status: 'skip', detail: 'PARLEY_AI_TOOLS=off and PARLEY_AI_VISION=off' };
  const props = await readServerProps(t.baseUrl);
  const parts: string[] = [];
  const fixes: string[] = [];
  let status: Check['status'] = 'ok';
  for (const c of asked) {
    const refusal = await probe(t, c);
    if (refusal === 'unreachable') return { name, status: 'skip', detail: 'the model server did not answer /chat/completions (see "AI provider")' };
    const propsSayNo = c === 'images' && props.images === false;
    if (refusal === undefined && !propsSayNo) {
      parts.push(`${c}: accepted`);
      continue;
    }
    parts.push(`${c}: ${refusal ? `refused (${refusal})` : 'not supported (/props: no vision)'}`);
    fixes.push(FIX[c]);
    if (t.settings[c] === 'on') status = 'fail';
    else if (status === 'ok') status = 'warn';
  }
  const left = status === 'warn' ? '; Parley leaves them out (auto)' : '';
  return { name, status, detail: `${parts.join(', ')}${left}`, ...(fixes.length ? { fix: fixes.join('; ') } : {}) };
}

/** `undefined` when accepted; the refusal's reason; or `unreachable`. */
async function probe(t: CapabilityTarget, c: Capability): Promise<string | undefined> {
  const url = `${(t.baseUrl || 'https://api.openai.com/v1').replace(/\/+$/, '')}/chat/completions`;
  let res: Response;
  try {
    res = await keyedFetch()(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(t.apiKey ? { authorization: `Bearer ${t.apiKey}` } : {}) },
      body: JSON.stringify({ model: t.model, max_tokens: 1, ...PROBES[c] }),
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
  } catch {
    return 'unreachable';
  }
  // No such path (a wrong base URL): nothing learned about tools or images; "AI provider" says why.
  if (res.status === 404) return 'unreachable';
  if (res.ok) {
    await res.body?.cancel();
    return undefined;
  }
  const body = (await res.json().catch(() => undefined)) as { error?: { message?: unknown } | string } | undefined;
  const message = typeof body?.error === 'string' ? body.error : typeof body?.error?.message === 'string' ? body.error.message : '';
  const reason = `HTTP ${res.status}${message ? `: ${message}` : ''}`;
  return reason.length > REASON_CHARS ? `${reason.slice(0, REASON_CHARS - 1)}…` : reason;
}
