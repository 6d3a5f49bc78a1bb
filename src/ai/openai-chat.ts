import OpenAI from 'openai';
import { AiError, AnswerCutError, type AiEvent, type AiMessage, type AiProvider, type AiTool, type CallUsage, type Sampling, type StreamChatOptions } from './ai.types';
import { estimatedUsage, reportedUsage } from './call-usage';
import { CANCELLED, IdleLimit, fetchWithoutBunTimeout, runTool } from './upstream';
import { parseSseBatches } from './sse-parse';
import { ThinkSplitter } from './think-splitter';
import { runResearch, type ResearchSettings } from './research-loop';
import type { SearchProvider } from './search';
import { shapeChatMessages, type ChatTurn } from './shape-chat-messages';
import { createCapabilities, type Capabilities } from './capabilities';
import { fitContext, overrunOf, promptRoom, type RenderRequest } from './fit-context';
import { createModelContextSource, type ModelContextSource } from './model-context';
import { keyedFetch } from '../net/keyed-fetch';

export interface ChatProviderConfig {
  baseUrl?: string;
  apiKey?: string;
  model: string;
  researchModel: string;
  search?: SearchProvider;
  research: ResearchSettings;
  /** PARLEY_AI_IDLE_TIMEOUT_S, in milliseconds. */
  idleTimeoutMs: number;
  /** What the server accepts (capabilities.ts); default: `auto` for both. */
  capabilities?: Capabilities;
  /** The context budget (fit-context.ts): the model's window, and PARLEY_AI_ANSWER_TOKENS. */
  budget?: ContextBudget;
}

export interface ContextBudget {
  contexts: ModelContextSource;
  /** PARLEY_AI_ANSWER_TOKENS; 0: a quarter of the context, at most 4,096. */
  answerTokens: number;
}

/**
 * Any OpenAI-compatible Chat Completions server. Such servers have no background mode and no
 * web search of their own, so Parley runs the research loop itself (research-loop.ts) and a
 * restarted server cannot resume an upstream turn (`canResume: false`).
 */
export function createChatProvider(cfg: ChatProviderConfig): AiProvider {
  const client = new OpenAI({ apiKey: cfg.apiKey ?? 'none', baseURL: cfg.baseUrl, maxRetries: 1, fetch: keyedFetch(fetchWithoutBunTimeout) });
  const chat = createChatClient(
    client,
    cfg.capabilities ?? createCapabilities({ tools: 'auto', images: 'auto' }, cfg.baseUrl),
    cfg.idleTimeoutMs,
    cfg.budget ?? { contexts: createModelContextSource({ baseUrl: cfg.baseUrl, apiKey: cfg.apiKey, contextTokens: 0 }), answerTokens: 0 },
  );
  return {
    name: 'openai-chat',
    canResume: false,
    streamChat(opts) {
      const model = opts.model ?? (opts.research ? cfg.researchModel : cfg.model);
      if (opts.research) return runResearch(chat, { ...opts, model }, cfg.search, cfg.research);
      return chat.stream({ model, messages: opts.messages, tools: opts.tools, signal: opts.signal, onUsage: opts.onUsage, sampling: opts.sampling });
    },
  };
}

export interface ChatClient {
  /** One streamed turn including tool rounds: reasoning, text and tool events; `onUsage` once a round. */
  stream(opts: ChatCall & { tools?: AiTool[] }): AsyncGenerator<AiEvent>;
  /** A short non-streamed completion (research planning); reasoning is returned apart. */
  complete(opts: ChatCall): Promise<{ text: string; reasoning: string }>;
  /**
   * The context budget's room beside `messages` (a request of them alone, no tools), with the
   * model's token counter: for text Parley may shorten to fit (research's page extracts).
   * Undefined when the model's context is unknown.
   */
  spare(opts: { model: string; messages: AiMessage[] }): Promise<{ tokens: number; countText: (text: string) => Promise<number> } | undefined>;
}

/** A call's model, messages, stop signal and what to tell of its usage (ai.types.ts, `onUsage`). */
export interface ChatCall {
  model: string;
  messages: AiMessage[];
  signal?: AbortSignal;
  onUsage?: (usage: CallUsage) => void;
  sampling?: Sampling;
}

export function createChatClient(client: OpenAI, caps: Capabilities, idleTimeoutMs: number, budget: ContextBudget): ChatClient {
  return {
    stream: (opts) => streamWithTools(client, caps, opts, idleTimeoutMs, budget),
    async spare({ model, messages }) {
      const context = await budget.contexts.get(model);
      if (!context.contextTokens) return undefined;
      const used = await context.counter.countRequest(render(messages, []).messages, []);
      return { tokens: promptRoom(context.contextTokens, budget.answerTokens) - used, countText: (text) => context.counter.countText(text) };
    },
    async complete({ model, messages, signal, onUsage }) {
      const request = await fitRequest(budget, model, messages, []);
      // Not streamed: the whole answer is one quiet spell, under the same limit.
      const idle = new IdleLimit(idleTimeoutMs, signal);
      try {
        const res: any = await client.chat.completions.create({ model, ...request } as any, { signal: idle.signal });
        const msg = res.choices?.[0]?.message ?? {};
        const answer = { text: String(msg.content ?? ''), reasoning: String(msg.reasoning_content ?? msg.reasoning ?? '') };
        onUsage?.(reportedUsage(res.usage) ?? estimatedUsage(request.messages as unknown[], answer.text + answer.reasoning));
        return answer;
      } catch (err) {
        throw idle.describe(err, signal);
      } finally {
        idle.stop();
      }
    },
  };
}

export const CUT_OFF = 'The answer was cut off: the model reached its length limit (its context or max_tokens).';
export const CUT_OFF_THINKING = 'The model reached its length limit while still thinking, before it wrote an answer.';
export const ONLY_THOUGHT = 'The model only thought and wrote no answer (its reasoning never ended). Try again, or use a chat template that closes the thinking block.';

/** Model calls and tool runs in one turn, at most: a model stuck calling tools must not loop for ever. */
const MAX_TOOL_ROUNDS = 8;

/** What the model sees where an image was left out, and what the user is told when it was theirs, now. */
export const IMAGE_NOT_SENT = 'An image was left out: the AI model on this server does not accept images.';

const toolWire = (t: AiTool) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } });
/** The request's messages and tools as sent (`toolRole`: capabilities.ts). */
const renderFor =
  (shape: { toolRole?: boolean } = {}): RenderRequest<AiTool> =>
  (turns, tools) => ({ messages: shapeChatMessages(turns, shape), tools: tools.map(toolWire) });
const render = renderFor();

/**
 * The request's `messages`, `tools` and answer limit, fitted to the model's context
 * (fit-context.ts). The limit is `max_tokens` for the local servers, which all take it, and
 * `max_completion_tokens` elsewhere (OpenAI's reasoning models refuse `max_tokens`).
 */
async function fitRequest(
  budget: ContextBudget,
  model: string,
  turns: ChatTurn[],
  tools: AiTool[],
  shape?: { toolRole?: boolean },
  shrinkBy = 0,
  sampling: Sampling = {},
): Promise<Record<string, unknown>> {
  const context = await budget.contexts.get(model);
  const shaped = renderFor(shape);
  const fitted = await fitContext(turns, tools, context, budget.answerTokens, shaped, shrinkBy);
  const { messages, tools: wire } = shaped(fitted.turns, fitted.tools);
  // The assistant's limit lowers the fitted one; with no budget known it is the limit itself.
  const maxTokens = minOf(fitted.maxTokens, sampling.maxOutputTokens);
  const limit = maxTokens === undefined ? {} : { [context.kind === 'other' ? 'max_completion_tokens' : 'max_tokens']: maxTokens };
  return { messages, ...(wire.length ? { tools: wire } : {}), ...limit, ...samplingWire(sampling) };
}

const minOf = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

/** Temperature and top_p as Chat Completions (and Anthropic) name them; an absent one is not sent. */
export const samplingWire = (s: Sampling) => ({ ...(s.temperature !== undefined ? { temperature: s.temperature } : {}), ...(s.topP !== undefined ? { top_p: s.topP } : {}) });

/** The turns with their images left out, each replaced by a note the model can read. */
function withoutImages(turns: ChatTurn[]): ChatTurn[] {
  return turns.map((t) => ('images' in t && t.images?.length ? { role: t.role, content: `${t.content}\n[${IMAGE_NOT_SENT}]` } : t));
}

async function* streamWithTools(
  client: OpenAI,
  caps: Capabilities,
  opts: ChatCall & { tools?: AiTool[] },
  idleTimeoutMs: number,
  budget: ContextBudget,
): AsyncGenerator<AiEvent> {
  let tools = opts.tools?.length && (await caps.allows('tools')) ? opts.tools : [];
  let toolRole = await caps.allows('toolRole');
  // Every round's request is shaped anew from the whole turn so far (shape-chat-messages.ts).
  let turns: ChatTurn[] = [...opts.messages];
  let partAdded = false;
  let thought = false;
  // Text the model wrote (the note about a left-out image is Parley's, not an answer).
  let answered = false;
  // The newest message's own images are the user's to hear about; older ones are left out quietly.
  const hasImages = (t: ChatTurn) => 'images' in t && !!t.images?.length;
  let sentImages = turns.some(hasImages);
  const leaveOutImages = function* (): Generator<AiEvent> {
    const told = hasImages(turns.at(-1)!);
    turns = withoutImages(turns);
    sentImages = false;
    if (!told) return;
    partAdded = true;
    yield { type: 'content_part.added' };
    yield { type: 'text.delta', delta: `*${IMAGE_NOT_SENT}*\n\n` };
  };
  if (sentImages && !(await caps.allows('images'))) yield* leaveOutImages();
  for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
    // The last round forbids tools (tool_choice "none"; still listed, since the history holds
    // tool calls some servers check against them): a model that kept calling them must now answer
    // with what it has, rather than the turn ending as completed with nothing said.
    const last = round === MAX_TOOL_ROUNDS - 1;
    let stream: AsyncIterable<any[]> | undefined;
    let idle = new IdleLimit(idleTimeoutMs, opts.signal);
    // A refusal of the tools, the images or the tool role (capabilities.ts) is retried once without them.
    // What the budget let into the request: a refusal is about what was sent.
    let sentTools = false;
    // Set once the server refused the request for the context's size although the budget fitted it.
    let shrinkBy: number | undefined;
    // What was sent: a server that reports no usage is counted from it (call-usage.ts).
    let sent: unknown[] = [];
    while (!stream) try {
      const request = await fitRequest(budget, opts.model, turns, tools, { toolRole }, shrinkBy, opts.sampling);
      sentTools = !!request.tools;
      sent = request.messages as unknown[];
      const res = await client.chat.completions
        .create(
          // The usage of the round comes in a last chunk (`choices: []`) when asked for: metering reads it.
          { model: opts.model, ...request, stream: true, stream_options: { include_usage: true }, ...(last && request.tools ? { tool_choice: 'none' } : {}) } as any,
          { signal: idle.signal },
        )
        .asResponse();
      stream = parseSseBatches(res.body, idle.signal);
    } catch (err) {
      idle.stop();
      const sent = { tools: sentTools, images: sentImages, toolRole: toolRole && turns.some((t) => t.role === 'tool') };
      const drop = opts.signal?.aborted || idle.fired ? undefined : caps.refused(err, sent);
      const overrun = drop || shrinkBy !== undefined || opts.signal?.aborted || idle.fired ? undefined : overrunOf(err, (await budget.contexts.get(opts.model)).contextTokens);
      if (overrun !== undefined) {
        // Once, with the room cut by what was over: the budget's count fell short of the server's.
        shrinkBy = overrun;
        idle = new IdleLimit(idleTimeoutMs, opts.signal);
        continue;
      }
      if (!drop) throw idle.describe(err, opts.signal);
      if (drop === 'tools') tools = [];
      else if (drop === 'toolRole') toolRole = false;
      else yield* leaveOutImages();
      idle = new IdleLimit(idleTimeoutMs, opts.signal);
    }
    const splitter = new ThinkSplitter();
    let reasoningOpen = false;
    let text = '';
    let finishReason: string | undefined;
    const calls: { id: string; name: string; arguments: string }[] = [];
    let usage: CallUsage | undefined;
    // Everything that came back, for the count when the server reports no usage.
    let received = '';
    const toText = function* (piece: string): Generator<AiEvent> {
      if (reasoningOpen) {
        reasoningOpen = false;
        yield { type: 'reasoning_text.done' };
      }
      if (!piece) return;
      if (!partAdded) {
        partAdded = true;
        yield { type: 'content_part.added' };
      }
      text += piece;
      answered = true;
      yield { type: 'text.delta', delta: piece };
    };
    try {
      for await (const chunks of stream) {
        idle.touch();
        for (const chunk of chunks) {
        if (chunk.error) throw new AiError('The AI provider failed while answering.', String(chunk.error.message ?? JSON.stringify(chunk.error)));
        if (chunk.usage) usage = reportedUsage(chunk.usage) ?? usage;
        finishReason = chunk.choices?.[0]?.finish_reason ?? finishReason;
        const delta = chunk.choices?.[0]?.delta;
        if (!delta) continue;
        if (typeof delta.content === 'string') received += delta.content;
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (typeof reasoning === 'string' && reasoning) {
          received += reasoning;
          reasoningOpen = thought = true;
          yield { type: 'reasoning_text.delta', delta: reasoning };
        }
        if (typeof delta.content === 'string' && delta.content) {
          for (const p of splitter.push(delta.content)) {
            if (p.kind === 'reasoning') {
              reasoningOpen = thought = true;
              yield { type: 'reasoning_text.delta', delta: p.text };
            } else yield* toText(p.text);
          }
        }
        for (const tc of delta.tool_calls ?? []) {
          const i = tc.index ?? 0;
          calls[i] ??= { id: '', name: '', arguments: '' };
          if (tc.id) calls[i].id = tc.id;
          if (tc.function?.name) calls[i].name += tc.function.name;
          if (tc.function?.arguments) calls[i].arguments += tc.function.arguments;
          received += `${tc.function?.name ?? ''}${tc.function?.arguments ?? ''}`;
        }
        }
      }
    } catch (err) {
      throw idle.describe(err, opts.signal);
    } finally {
      idle.stop();
      // Once a round, however it ended: a round stopped half-way was paid for too.
      opts.onUsage?.(usage ?? estimatedUsage(sent, received));
    }
    // An aborted stream may end quietly: do not mistake it for the end of the answer.
    if (opts.signal?.aborted) throw new AiError(CANCELLED);
    if (idle.fired) throw idle.describe(undefined, opts.signal);
    for (const p of splitter.flush()) {
      if (p.kind === 'reasoning') {
        thought = true;
        yield { type: 'reasoning_text.delta', delta: p.text };
      } else yield* toText(p.text);
    }
    if (reasoningOpen) yield { type: 'reasoning_text.done' };
    // Endings that are not an answer (docs/chat.md, "Endings"): the text so far stays, but the
    // turn must not be stored as completed.
    if (finishReason === 'length') throw new AnswerCutError(answered ? CUT_OFF : CUT_OFF_THINKING);
    const made = calls.filter(Boolean);
    if (!made.length) {
      if (!answered && thought) throw new AiError(ONLY_THOUGHT);
      return;
    }
    if (last) throw new AiError('The model kept calling tools instead of answering.');
    const callIds = made.map((c, i) => c.id || `call_${round}_${i}`);
    turns.push({ role: 'assistant', content: text, toolCalls: made.map((c, i) => ({ id: callIds[i]!, name: c.name, arguments: c.arguments })) });
    for (const [i, c] of made.entries()) {
      const pending: AiEvent[] = [];
      const callId = callIds[i]!;
      const output = await runTool(tools, { callId, name: c.name, arguments: c.arguments }, (e) => pending.push(e), `round ${round}:${i}:${callId}`);
      yield* pending;
      turns.push({ role: 'tool', callId, name: c.name, content: output });
    }
  }
}
