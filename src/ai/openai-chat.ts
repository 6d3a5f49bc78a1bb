import OpenAI from 'openai';
import { AiError, AnswerCutError, type AiEvent, type AiMessage, type AiProvider, type AiTool, type StreamChatOptions } from './ai.types';
import { CANCELLED, IdleLimit, fetchWithoutBunTimeout, runTool } from './upstream';
import { parseSseBatches } from './sse-parse';
import { ThinkSplitter } from './think-splitter';
import { runResearch, type ResearchSettings } from './research-loop';
import type { SearchProvider } from './search';
import { webSearchTool } from './web-search-tool';
import { shapeChatMessages, type ChatTurn } from './shape-chat-messages';
import { createCapabilities, type Capabilities } from './capabilities';

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
}

/**
 * Any OpenAI-compatible Chat Completions server. Such servers have no background mode and no
 * web search of their own, so Parley runs the research loop itself (research-loop.ts) and a
 * restarted server cannot resume an upstream turn (`canResume: false`).
 */
export function createChatProvider(cfg: ChatProviderConfig): AiProvider {
  const client = new OpenAI({ apiKey: cfg.apiKey ?? 'none', baseURL: cfg.baseUrl, maxRetries: 1, fetch: fetchWithoutBunTimeout });
  const chat = createChatClient(client, cfg.capabilities ?? createCapabilities({ tools: 'auto', images: 'auto' }, cfg.baseUrl), cfg.idleTimeoutMs);
  return {
    name: 'openai-chat',
    canResume: false,
    streamChat(opts) {
      const model = opts.model ?? (opts.research ? cfg.researchModel : cfg.model);
      if (opts.research) return runResearch(chat, { ...opts, model }, cfg.search, cfg.research);
      const tools = [...(opts.tools ?? []), ...(opts.webSearch && cfg.search ? [webSearchTool(cfg.search, opts.warn)] : [])];
      return chat.stream({ model, messages: opts.messages, tools, signal: opts.signal });
    },
  };
}

export interface ChatClient {
  /** One streamed turn including tool rounds: reasoning, text and tool events. */
  stream(opts: { model: string; messages: AiMessage[]; tools?: AiTool[]; signal?: AbortSignal }): AsyncGenerator<AiEvent>;
  /** A short non-streamed completion (research planning); reasoning is returned apart. */
  complete(opts: { model: string; messages: AiMessage[]; signal?: AbortSignal }): Promise<{ text: string; reasoning: string }>;
}

export function createChatClient(client: OpenAI, caps: Capabilities, idleTimeoutMs: number): ChatClient {
  return {
    stream: (opts) => streamWithTools(client, caps, opts, idleTimeoutMs),
    async complete({ model, messages, signal }) {
      // Not streamed: the whole answer is one quiet spell, under the same limit.
      const idle = new IdleLimit(idleTimeoutMs, signal);
      try {
        const res: any = await client.chat.completions.create({ model, messages: shapeChatMessages(messages) as any }, { signal: idle.signal });
        const msg = res.choices?.[0]?.message ?? {};
        return { text: String(msg.content ?? ''), reasoning: String(msg.reasoning_content ?? msg.reasoning ?? '') };
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

/** The turns with their images left out, each replaced by a note the model can read. */
function withoutImages(turns: ChatTurn[]): ChatTurn[] {
  return turns.map((t) => ('images' in t && t.images?.length ? { role: t.role, content: `${t.content}\n[${IMAGE_NOT_SENT}]` } : t));
}

async function* streamWithTools(
  client: OpenAI,
  caps: Capabilities,
  opts: { model: string; messages: AiMessage[]; tools?: AiTool[]; signal?: AbortSignal },
  idleTimeoutMs: number,
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
    while (!stream) try {
      const res = await client.chat.completions
        .create(
        {
          model: opts.model,
          messages: shapeChatMessages(turns, { toolRole }),
          stream: true,
          ...(tools.length
            ? {
                tools: tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })),
                ...(last ? { tool_choice: 'none' } : {}),
              }
            : {}),
        } as any,
          { signal: idle.signal },
        )
        .asResponse();
      stream = parseSseBatches(res.body, idle.signal);
    } catch (err) {
      idle.stop();
      const sent = { tools: tools.length > 0, images: sentImages, toolRole: toolRole && turns.some((t) => t.role === 'tool') };
      const drop = opts.signal?.aborted || idle.fired ? undefined : caps.refused(err, sent);
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
        finishReason = chunk.choices?.[0]?.finish_reason ?? finishReason;
        const delta = chunk.choices?.[0]?.delta;
        if (!delta) continue;
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (typeof reasoning === 'string' && reasoning) {
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
        }
        }
      }
    } catch (err) {
      throw idle.describe(err, opts.signal);
    } finally {
      idle.stop();
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
