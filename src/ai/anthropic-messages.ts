import Anthropic from '@anthropic-ai/sdk';
import { AiError, AnswerCutError, type AiEvent, type AiMessage, type AiProvider, type AiTool, type CallUsage } from './ai.types';
import { samplingWire, type ChatCall, type ChatClient } from './openai-chat';
import { estimatedUsage } from './call-usage';
import { runResearch, type ResearchSettings } from './research-loop';
import type { SearchProvider } from './search';
import { keyedFetch, refusedRedirectMessage, refusedRedirectOf } from '../net/keyed-fetch';
import { CANCELLED, fetchWithoutBunTimeout, IdleLimit, refusalOf, runTool } from './upstream';
import { CUT_OFF, CUT_OFF_THINKING, ONLY_THOUGHT } from './openai-chat';
import { imageBlock, type Block } from './anthropic-blocks';

/**
 * Anthropic's Messages API through the official SDK (docs/ai-providers.md, "Anthropic"):
 * streamed text, Parley's tools in its own tool loop (as openai-chat runs them), images, extended
 * thinking as `reasoning_text.*` events, the system message cached (`cache_control`), and the
 * usage the API reports of each round handed to `onUsage`. No background mode: a restart cannot resume a turn.
 */
export interface AnthropicProviderConfig {
  baseUrl: string;
  apiKey?: string;
  model: string;
  researchModel: string;
  /** Tokens the model may think before it answers; 0: no extended thinking. */
  thinkingTokens: number;
  /** The longest answer (`max_tokens`, thinking excluded); default 4,096. */
  answerTokens?: number;
  idleTimeoutMs: number;
  search?: SearchProvider;
  research?: ResearchSettings;
}

const DEFAULT_ANSWER_TOKENS = 4096;
const MAX_TOOL_ROUNDS = 8;

type Turn = { role: 'user' | 'assistant'; content: Block[] };

export function createAnthropicProvider(cfg: AnthropicProviderConfig): AiProvider {
  // A key is always passed: without one the SDK would look for ANTHROPIC_API_KEY and local profiles.
  // The SDK sends it as a bearer token; `x-api-key` too, for proxies and older servers that read only that.
  const apiKey = cfg.apiKey || 'none';
  const client = new Anthropic({ apiKey, baseURL: cfg.baseUrl, maxRetries: 1, fetch: keyedFetch(fetchWithoutBunTimeout), defaultHeaders: { 'x-api-key': apiKey } });
  const chat = anthropicChatClient(client, cfg);
  return {
    name: 'anthropic',
    canResume: false,
    streamChat(opts) {
      const model = opts.model ?? (opts.research ? cfg.researchModel : cfg.model);
      if (opts.research && cfg.research) return runResearch(chat, { ...opts, model }, cfg.search, cfg.research);
      return streamWithTools(client, cfg, { model, messages: opts.messages, tools: opts.tools, signal: opts.signal, onUsage: opts.onUsage, sampling: opts.sampling });
    },
  };
}

/** The research loop's view of the model (research-loop.ts): a turn, a short completion, no token budget. */
function anthropicChatClient(client: Anthropic, cfg: AnthropicProviderConfig): ChatClient {
  return {
    stream: (opts) => streamWithTools(client, cfg, opts),
    spare: async () => undefined,
    async complete({ model, messages, signal, onUsage }) {
      const idle = new IdleLimit(cfg.idleTimeoutMs, signal, describeAnthropic);
      try {
        const request = requestOf(messages);
        const res = await client.messages.create({ model, max_tokens: cfg.answerTokens ?? DEFAULT_ANSWER_TOKENS, ...request } as never, { signal: idle.signal });
        const { content: blocks, usage } = res as unknown as { content: Block[]; usage?: unknown };
        const answer = {
          text: blocks.filter((b) => b.type === 'text').map((b) => String(b.text)).join(''),
          reasoning: blocks.filter((b) => b.type === 'thinking').map((b) => String(b.thinking)).join(''),
        };
        const reported = inputUsageOf(usage);
        onUsage?.(reported ? { ...reported, outputTokens: Number((usage as { output_tokens?: number }).output_tokens) || 0 } : estimatedUsage(wireOf(request), answer.text + answer.reasoning));
        return answer;
      } catch (err) {
        throw idle.describe(err, signal);
      } finally {
        idle.stop();
      }
    },
  };
}

/**
 * Parley's messages as a Messages request: every system text joined into one system block (its
 * end cached: the same prefix each turn), and user/assistant turns with empty ones left out (the
 * API refuses empty text blocks) and consecutive ones of a role merged (it wants them to alternate).
 */
export function requestOf(messages: AiMessage[]): { system?: Block[]; messages: Turn[] } {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .filter(Boolean)
    .join('\n\n');
  const turns: Turn[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const content: Block[] = [...(m.images ?? []).map((i) => imageBlock(i.imageUrl)), ...(m.content.trim() ? [{ type: 'text', text: m.content }] : [])];
    if (!content.length) continue;
    const last = turns.at(-1);
    if (last?.role === m.role) last.content.push(...content);
    else if (turns.length || m.role === 'user') turns.push({ role: m.role, content });
  }
  return { ...(system ? { system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }] } : {}), messages: turns };
}

/** Anthropic's temperature runs 0–1, OpenAI's 0–2 (which an assistant may use): higher is Anthropic's highest. */
const clampTemperature = (x: number | undefined) => (x === undefined ? undefined : Math.min(1, x));

type StreamOpts = ChatCall & { tools?: AiTool[] };

/** One turn: rounds of a streamed message, the tools it called run between them. */
async function* streamWithTools(client: Anthropic, cfg: AnthropicProviderConfig, opts: StreamOpts): AsyncGenerator<AiEvent> {
  const { system, messages } = requestOf(opts.messages);
  const tools = opts.tools ?? [];
  const thinking = cfg.thinkingTokens >= 1024 ? { type: 'enabled', budget_tokens: cfg.thinkingTokens } : undefined;
  // The assistant's limit is on the answer; thinking keeps its own budget on top.
  const answerTokens = Math.min(cfg.answerTokens ?? DEFAULT_ANSWER_TOKENS, opts.sampling?.maxOutputTokens ?? Infinity);
  const maxTokens = answerTokens + (thinking ? cfg.thinkingTokens : 0);
  // Anthropic refuses temperature and top_p beside extended thinking: they are left out then.
  // Current Claude models also refuse both at once: temperature, the more common, goes alone then.
  const sampling = thinking ? {} : samplingWire({ temperature: clampTemperature(opts.sampling?.temperature), topP: opts.sampling?.temperature === undefined ? opts.sampling?.topP : undefined });
  let partAdded = false;
  let answered = false;
  let thought = false;
  for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
    const last = round === MAX_TOOL_ROUNDS - 1;
    const idle = new IdleLimit(cfg.idleTimeoutMs, opts.signal, describeAnthropic);
    const blocks: Block[] = [];
    const json: string[] = [];
    let stopReason: string | null = null;
    // The round's usage: input from `message_start`, output as `message_delta` runs its total.
    let usage: CallUsage | undefined;
    let roundOutput: number | undefined;
    let started = false;
    try {
      const stream = await client.messages.create(
        {
          model: opts.model,
          max_tokens: maxTokens,
          ...(system ? { system } : {}),
          messages,
          ...(tools.length ? { tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) } : {}),
          ...(tools.length && last ? { tool_choice: { type: 'none' } } : {}),
          ...(thinking ? { thinking } : {}),
          ...sampling,
          stream: true,
        } as never,
        { signal: idle.signal },
      );
      for await (const ev of stream as unknown as AsyncIterable<any>) {
        idle.touch();
        switch (ev.type) {
          case 'message_start':
            started = true;
            usage = inputUsageOf(ev.message?.usage);
            break;
          case 'content_block_start':
            blocks[ev.index] = { ...ev.content_block };
            if (ev.content_block.type === 'thinking') thought = true;
            break;
          case 'content_block_delta': {
            const block = blocks[ev.index];
            const d = ev.delta;
            if (!block) break;
            if (d.type === 'text_delta' && d.text) {
              block.text = `${block.text ?? ''}${d.text}`;
              if (!partAdded) {
                partAdded = true;
                yield { type: 'content_part.added' };
              }
              answered = true;
              yield { type: 'text.delta', delta: d.text };
            } else if (d.type === 'thinking_delta' && d.thinking) {
              block.thinking = `${block.thinking ?? ''}${d.thinking}`;
              yield { type: 'reasoning_text.delta', delta: d.thinking };
            } else if (d.type === 'signature_delta') block.signature = d.signature;
            else if (d.type === 'input_json_delta') json[ev.index] = (json[ev.index] ?? '') + d.partial_json;
            break;
          }
          case 'content_block_stop':
            if (blocks[ev.index]?.type === 'thinking') yield { type: 'reasoning_text.done' };
            break;
          case 'message_delta':
            stopReason = ev.delta?.stop_reason ?? stopReason;
            // A running total of the round's output.
            if (typeof ev.usage?.output_tokens === 'number') roundOutput = ev.usage.output_tokens;
            break;
        }
      }
    } catch (err) {
      throw idle.describe(err, opts.signal);
    } finally {
      idle.stop();
      // Once a round, however it ended. A round cut before the API said what it used is counted.
      if (started || usage) {
        const counted = estimatedUsage(wireOf({ system, messages }), blocks.map((b) => `${b?.text ?? ''}${b?.thinking ?? ''}`).join('') + json.join(''));
        opts.onUsage?.(usage && roundOutput !== undefined ? { ...usage, outputTokens: roundOutput } : { ...(usage ?? counted), outputTokens: counted.outputTokens, estimated: true });
      }
    }
    if (opts.signal?.aborted) throw new AiError(CANCELLED);
    if (idle.fired) throw idle.describe(undefined, opts.signal);
    if (stopReason === 'max_tokens') throw new AnswerCutError(answered ? CUT_OFF : CUT_OFF_THINKING);
    if (stopReason === 'refusal') throw new AiError('The model declined to answer this request.');
    const calls = blocks.flatMap((b, i) => (b?.type === 'tool_use' ? [{ id: String(b.id), name: String(b.name), arguments: json[i] || '{}' }] : []));
    if (stopReason !== 'tool_use' || !calls.length) {
      if (!answered && thought) throw new AiError(ONLY_THOUGHT);
      return;
    }
    if (last) throw new AiError('The model kept calling tools instead of answering.');
    // The assistant's turn goes back as it came (thinking blocks with their signatures are required with tools).
    messages.push({
      role: 'assistant',
      content: blocks.filter(Boolean).map((b, i) => (b.type === 'tool_use' ? { type: 'tool_use', id: b.id, name: b.name, input: parseInput(json[i]) } : b)),
    });
    const results: Block[] = [];
    for (const [i, call] of calls.entries()) {
      const pending: AiEvent[] = [];
      const output = await runTool(tools, { callId: call.id, name: call.name, arguments: call.arguments }, (e) => pending.push(e), `round ${round}:${i}:${call.id}`);
      yield* pending;
      results.push({ type: 'tool_result', tool_use_id: call.id, content: output || '(no output)' });
    }
    messages.push({ role: 'user', content: results });
  }
}

const parseInput = (text: string | undefined): unknown => {
  try {
    const v = JSON.parse(text || '{}');
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
};

/**
 * `message_start`'s input usage (the output's comes in `message_delta`). Anthropic's
 * `input_tokens` leaves out what was read from or written to the prompt cache: all three are input.
 */
function inputUsageOf(u: any): CallUsage | undefined {
  if (!u || typeof u.input_tokens !== 'number') return undefined;
  const cached = Number(u.cache_read_input_tokens) || 0;
  const written = Number(u.cache_creation_input_tokens) || 0;
  return { inputTokens: u.input_tokens + cached + written, outputTokens: Number(u.output_tokens) || 0, cachedTokens: cached, reasoningTokens: 0, estimated: false };
}

/** A Messages request's system text and turns, as the usage counter reads them. */
const wireOf = (request: { system?: Block[]; messages: Turn[] }): unknown[] => [...(request.system ?? []), ...request.messages];

/** Anthropic's failures as the short, safe sentences the user sees (upstream.ts for the OpenAI ones). */
export function describeAnthropic(err: unknown, signal?: AbortSignal): AiError {
  if (err instanceof AiError) return err;
  if (err instanceof Anthropic.APIUserAbortError || signal?.aborted) return new AiError(CANCELLED);
  const detail = err instanceof Error ? err.message : String(err);
  if (refusedRedirectOf(err)) return new AiError(refusedRedirectMessage('The AI provider', 'its connection\'s base URL'), detail);
  if (err instanceof Anthropic.APIConnectionError) return new AiError('The AI provider could not be reached.', detail);
  if (err instanceof Anthropic.APIError) {
    if (err.status) return new AiError(`${refusalOf(err.status, detail)} (HTTP ${err.status}).`, detail);
    // An `error` event inside the stream (overloaded_error, api_error): no status, a type.
    const type = (err.error as { error?: { type?: string } } | undefined)?.error?.type;
    if (type === 'overloaded_error') return new AiError('The AI provider is overloaded; try again later.', detail);
    return new AiError('The AI provider failed while answering.', detail);
  }
  return new AiError('The AI provider failed.', detail);
}
