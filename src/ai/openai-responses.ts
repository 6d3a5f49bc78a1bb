import OpenAI from 'openai';
import { AiError, SHUTDOWN_REASON, type AiEvent, type AiMessage, type AiProvider, type AiTool, type StreamChatOptions, type WebSearchResult } from './ai.types';

export interface ResponsesProviderConfig {
  baseUrl?: string;
  apiKey?: string;
  model: string;
  researchModel: string;
}

/**
 * OpenAI's Responses API in background mode (`background: true, stream: true`): the response
 * keeps running upstream when Parley restarts, and `retrieve(id, {stream, starting_after})`
 * replays the events after the last relayed `sequence_number`. Function tools (canvas, history)
 * are answered with a follow-up response chained by `previous_response_id`.
 */
export function createResponsesProvider(cfg: ResponsesProviderConfig): AiProvider {
  const client = new OpenAI({ apiKey: cfg.apiKey ?? 'none', baseURL: cfg.baseUrl, maxRetries: 1 });
  return {
    name: 'openai-responses',
    canResume: true,
    streamChat: (opts) => streamTurns(client, cfg, opts),
  };
}

/** A follow-up turn after function calls, or the first one. */
interface Turn {
  previousResponseId?: string;
  toolOutputs?: { call_id: string; output: string }[];
}

async function* streamTurns(client: OpenAI, cfg: ResponsesProviderConfig, opts: StreamChatOptions): AsyncGenerator<AiEvent> {
  const model = opts.model ?? (opts.research ? cfg.researchModel : cfg.model);
  const tools = opts.tools ?? [];
  const apiTools: any[] = tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false }));
  if (opts.research || opts.webSearch) apiTools.push({ type: 'web_search_preview' });
  const base = {
    model,
    background: true,
    store: true,
    ...(apiTools.length ? { tools: apiTools } : {}),
    ...(opts.research || opts.webSearch ? { include: ['web_search_call.action.sources'] } : {}),
  };
  let resume = opts.resumeFrom;
  let turn: Turn | undefined = {};
  /** The upstream response in flight, until it reached a terminal event. */
  let live: string | undefined = resume?.upstreamId;
  try {
  // A research model may call tools many times; a bound keeps a looping model from running forever.
  for (let round = 0; turn && round < 16; round++) {
    let stream: AsyncIterable<any>;
    try {
      if (resume) {
        stream = (await client.responses.retrieve(
          resume.upstreamId,
          { stream: true, starting_after: resume.sequenceNumber },
          { signal: opts.signal },
        )) as unknown as AsyncIterable<any>;
      } else if (turn.previousResponseId) {
        stream = (await client.responses.create(
          { ...base, stream: true, previous_response_id: turn.previousResponseId, input: turn.toolOutputs!.map((o) => ({ type: 'function_call_output', ...o })) } as any,
          { signal: opts.signal },
        )) as unknown as AsyncIterable<any>;
      } else {
        const { instructions, input } = toInput(opts.messages);
        stream = (await client.responses.create({ ...base, stream: true, instructions, input } as any, { signal: opts.signal })) as unknown as AsyncIterable<any>;
      }
    } catch (err) {
      throw describeUpstream(err);
    }
    const mapper = new ResponsesEventMapper(model);
    let upstreamId = resume?.upstreamId;
    resume = undefined;
    try {
      for await (const ev of stream) {
        if (ev.response?.id) live = upstreamId = ev.response.id;
        for (const out of mapper.map(ev)) yield out;
        if (upstreamId && typeof ev.sequence_number === 'number') opts.onCursor?.({ upstreamId, sequenceNumber: ev.sequence_number });
      }
    } catch (err) {
      throw describeUpstream(err);
    }
    // The SDK ends an aborted stream quietly; the upstream response is still running.
    if (opts.signal?.aborted) throw new AiError('The response was cancelled.');
    live = undefined;
    if (mapper.failure) throw new AiError(mapper.failure);
    if (!mapper.finished) throw new AiError('The AI provider ended the stream before the response was complete.');
    turn = undefined;
    if (mapper.functionCalls.length) {
      const toolOutputs: { call_id: string; output: string }[] = [];
      const pending: AiEvent[] = [];
      for (const call of mapper.functionCalls) {
        const output = await runTool(tools, call, (e) => pending.push(e));
        toolOutputs.push({ call_id: call.callId, output });
        for (const e of pending.splice(0)) yield e;
      }
      turn = { previousResponseId: upstreamId, toolOutputs };
    }
  }
  } finally {
    // Stopped by the user (abort, or the consumer returning early): stop paying for the upstream run too.
    if (live && opts.signal?.aborted && opts.signal.reason !== SHUTDOWN_REASON) await client.responses.cancel(live).catch(() => undefined);
  }
}

export async function runTool(
  tools: AiTool[],
  call: { callId: string; name: string; arguments: string },
  emit: (e: AiEvent) => void,
): Promise<string> {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return `Unknown tool ${call.name}.`;
  let args: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(call.arguments || '{}');
    if (parsed && typeof parsed === 'object') args = parsed;
  } catch {
    // Small models send broken JSON; the tool gets what can be salvaged (nothing) rather than failing the turn.
  }
  try {
    return await tool.run(args, emit, call.callId);
  } catch (err) {
    return `The tool failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function toInput(messages: AiMessage[]): { instructions?: string; input: any[] } {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  const input = messages
    .filter((m) => m.role !== 'system')
    .map((m) =>
      m.role === 'user' && m.images?.length
        ? {
            role: 'user',
            content: [
              { type: 'input_text', text: m.content },
              ...m.images.map((i) => ({ type: 'input_image', image_url: i.imageUrl, detail: i.detail ?? 'auto' })),
            ],
          }
        : { role: m.role, content: m.content },
    );
  return { instructions: system.length ? system.join('\n\n') : undefined, input };
}

/** Map upstream failures to messages safe to show (never the key, never a stack). */
export function describeUpstream(err: unknown): Error {
  if (err instanceof AiError) return err;
  if (err instanceof OpenAI.APIUserAbortError) return new AiError('The response was cancelled.');
  if (err instanceof OpenAI.APIConnectionError) return new AiError('The AI provider could not be reached.');
  if (err instanceof OpenAI.APIError) return new AiError(`The AI provider answered with an error${err.status ? ` (HTTP ${err.status})` : ''}: ${err.message}`);
  return new AiError(`The AI provider failed: ${err instanceof Error ? err.message : String(err)}`);
}

/**
 * Upstream Responses events → the interface's union. Stateful: it remembers web-search calls
 * (their sources come with `output_item.done`, titles with the answer's `url_citation`s) and the
 * function calls of the turn.
 */
export class ResponsesEventMapper {
  finished = false;
  failure: string | undefined;
  functionCalls: { callId: string; name: string; arguments: string }[] = [];
  private readonly searches = new Map<string, { query: string; started: boolean }>();
  private readonly unsourced: string[] = [];
  private readonly titles = new Map<string, string>();
  private reasoningOpen = false;

  constructor(private readonly model: string) {}

  *map(ev: any): Generator<AiEvent> {
    switch (ev.type) {
      case 'response.output_item.added': {
        const item = ev.item ?? {};
        if (item.type === 'web_search_call') {
          this.searches.set(item.id, { query: item.action?.query ?? '', started: false });
        } else if (item.type === 'image_generation_call') {
          yield { type: 'image_generation.in_progress', itemId: item.id, ...pick(item, ['output_format', 'size']) };
        } else if (item.type === 'code_interpreter_call') {
          yield { type: 'code_interpreter.in_progress', itemId: item.id };
        }
        return;
      }
      case 'response.web_search_call.in_progress':
      case 'response.web_search_call.searching': {
        const s = this.searches.get(ev.item_id) ?? { query: '', started: false };
        this.searches.set(ev.item_id, s);
        if (!s.started) {
          s.started = true;
          yield { type: 'web_search.in_progress', itemId: ev.item_id, query: s.query };
        }
        return;
      }
      case 'response.content_part.added':
        if (ev.part?.type === 'output_text') {
          yield* this.closeReasoning();
          yield { type: 'content_part.added' };
        }
        return;
      case 'response.output_text.delta':
        yield* this.closeReasoning();
        yield { type: 'text.delta', delta: ev.delta ?? '' };
        return;
      case 'response.output_text.annotation.added': {
        const a = ev.annotation;
        if (a?.type === 'url_citation' && a.url) this.titles.set(a.url, a.title ?? '');
        return;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.reasoningOpen = true;
        yield { type: 'reasoning_text.delta', delta: ev.delta ?? '' };
        return;
      case 'response.reasoning_summary_text.done':
      case 'response.reasoning_text.done':
        yield* this.closeReasoning();
        return;
      case 'response.output_item.done': {
        const item = ev.item ?? {};
        if (item.type === 'web_search_call') yield* this.completeSearch(item);
        else if (item.type === 'image_generation_call' && item.result)
          yield { type: 'image_generation.completed', images: [{ type: 'base64', data: item.result }], model: this.model };
        else if (item.type === 'code_interpreter_call') yield { type: 'code_interpreter.completed' };
        else if (item.type === 'function_call') this.functionCalls.push({ callId: item.call_id, name: item.name, arguments: item.arguments ?? '' });
        else if (item.type === 'message') yield* this.flushUnsourced();
        return;
      }
      case 'response.completed':
        yield* this.closeReasoning();
        yield* this.flushUnsourced();
        this.finished = true;
        return;
      case 'response.incomplete':
        this.failure = `The response stopped early (${ev.response?.incomplete_details?.reason ?? 'incomplete'}).`;
        return;
      case 'response.failed':
        this.failure = ev.response?.error?.message ?? 'The AI provider failed to complete the response.';
        return;
      case 'error':
        this.failure = ev.message ?? 'The AI provider reported an error.';
        return;
      default:
        return;
    }
  }

  private *closeReasoning(): Generator<AiEvent> {
    if (this.reasoningOpen) {
      this.reasoningOpen = false;
      yield { type: 'reasoning_text.done' };
    }
  }

  /** Calls that came without sources get their results from the answer's `url_citation`s. */
  private *flushUnsourced(): Generator<AiEvent> {
    for (const _ of this.unsourced.splice(0)) {
      const results = [...this.titles].map(([link, title]) => ({ link, title: title || hostOf(link), snippet: '' }));
      yield { type: 'web_search.completed', results };
    }
  }

  private *completeSearch(item: any): Generator<AiEvent> {
    const s = this.searches.get(item.id);
    const query = item.action?.query ?? item.action?.queries?.[0] ?? s?.query ?? '';
    if (!s?.started) yield { type: 'web_search.in_progress', itemId: item.id, query };
    const sources: { url: string }[] = item.action?.sources ?? [];
    if (!sources.length) {
      this.unsourced.push(item.id);
      return;
    }
    const results: WebSearchResult[] = sources.map((src) => ({ link: src.url, title: this.titles.get(src.url) || hostOf(src.url), snippet: '' }));
    yield { type: 'web_search.completed', results };
  }
}

const hostOf = (url: string) => {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
};

function pick(item: any, keys: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) if (typeof item[k] === 'string') out[k === 'output_format' ? 'outputFormat' : k] = item[k];
  return out;
}
