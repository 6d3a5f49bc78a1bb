import OpenAI from 'openai';
import { parseSseBatches } from './sse-parse';
import { AiError, SHUTDOWN_REASON, type AiEvent, type AiMessage, type AiProvider, type Sampling, type StreamChatOptions } from './ai.types';
import { ResponsesEventMapper } from './responses-mapper';
import { describeUpstream, runTool } from './upstream';
import { estimatedUsage, reportedUsage } from './call-usage';
import { keyedFetch } from '../net/keyed-fetch';

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
  const client = new OpenAI({ apiKey: cfg.apiKey ?? 'none', baseURL: cfg.baseUrl, maxRetries: 1, fetch: keyedFetch() });
  return {
    name: 'openai-responses',
    canResume: true,
    streamChat: (opts) => flatten(streamTurns(client, cfg, opts)),
    streamChatBatches: (opts) => streamTurns(client, cfg, opts),
  };
}

async function* noEvents(): AsyncGenerator<any[]> {}

/** Reconnects to a running background response after its stream broke, in a row without progress. */
const MAX_RECONNECTS = 3;
const RECONNECT_DELAY_MS = 250;
/** How long stopping a cancelled turn waits for the provider to confirm the upstream cancel. */
const UPSTREAM_CANCEL_TIMEOUT_MS = 5_000;

/** A follow-up turn after function calls, or the first one. */
interface Turn {
  previousResponseId?: string;
  toolOutputs?: { call_id: string; output: string }[];
}

async function* flatten<T>(batches: AsyncIterable<T[]>): AsyncGenerator<T> {
  for await (const batch of batches) yield* batch;
}

/** An assistant's sampling settings in the Responses API's words; an absent one is not sent. */
const responsesSampling = (s: Sampling = {}) => ({
  ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
  ...(s.topP !== undefined ? { top_p: s.topP } : {}),
  ...(s.maxOutputTokens !== undefined ? { max_output_tokens: s.maxOutputTokens } : {}),
});

/** The turn's events, one array per upstream network chunk (one await per chunk on the hot path). */
async function* streamTurns(client: OpenAI, cfg: ResponsesProviderConfig, opts: StreamChatOptions): AsyncGenerator<AiEvent[]> {
  const model = opts.model ?? (opts.research ? cfg.researchModel : cfg.model);
  const tools = opts.tools ?? [];
  const apiTools: any[] = tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false }));
  if (opts.research || opts.webSearch) apiTools.push({ type: 'web_search_preview' });
  const base = {
    model,
    background: true,
    store: true,
    // OpenAI's own context budget: a conversation longer than the model's window loses its oldest
    // items instead of failing every later turn (the default, `disabled`, answers 400).
    truncation: 'auto',
    ...(apiTools.length ? { tools: apiTools } : {}),
    ...responsesSampling(opts.sampling),
    ...(opts.research || opts.webSearch ? { include: ['web_search_call.action.sources'] } : {}),
  };
  let resume = opts.resumeFrom;
  let turn: Turn | undefined = {};
  /** The upstream response in flight, until it reached a terminal event. */
  let live: string | undefined = resume?.upstreamId;
  /** Kept across reconnects of one upstream response (the mapper remembers searches and calls). */
  let mapper: ResponsesEventMapper | undefined;
  /**
   * After a restart the mapper starts empty, yet it must know the searches and function calls
   * the response made before (or a search is announced twice and a tool call is never answered).
   * So the response is replayed from its first event: events up to the stored cursor rebuild the
   * mapper's state without being handed on again (they were delivered and stored already).
   */
  let replayThrough = resume?.sequenceNumber;
  /**
   * The last sequence number of the current upstream response fed to the mapper, replayed or
   * relayed: a reconnect continues right after it, so a replay cut short resumes where it stood.
   */
  let fed = -1;
  const replayed: AiEvent[] = [];
  let reconnects = 0;
  /**
   * An upstream response whose usage has not come yet, and the text it sent so far: its terminal
   * event (`response.completed`, `.incomplete`, `.failed`) carries `usage`, once per response, which
   * is what metering records; one stopped before it is counted.
   */
  // A response picked up after a restart: its usage is still to come (its `response.created` was relayed before).
  let unreported = !!opts.resumeFrom;
  let received = '';
  try {
  // A research model may call tools many times; a bound keeps a looping model from running forever.
  for (let round = 0; turn && round < 16; round++) {
    let stream: AsyncIterable<any[]> = noEvents();
    let broken: unknown;
    try {
      if (resume) {
        const query = fed >= 0 ? { stream: true as const, starting_after: fed } : { stream: true as const };
        stream = parseSseBatches((await client.responses.retrieve(resume.upstreamId, query, { signal: opts.signal }).asResponse()).body, opts.signal);
      } else if (turn.previousResponseId) {
        const body = { ...base, stream: true, previous_response_id: turn.previousResponseId, input: turn.toolOutputs!.map((o) => ({ type: 'function_call_output', ...o })) };
        stream = parseSseBatches((await client.responses.create(body as any, { signal: opts.signal }).asResponse()).body, opts.signal);
      } else {
        const { instructions, input } = toInput(opts.messages);
        stream = parseSseBatches((await client.responses.create({ ...base, stream: true, instructions, input } as any, { signal: opts.signal }).asResponse()).body, opts.signal);
      }
    } catch (err) {
      // Reaching a response that is already running may be retried below; starting one may not.
      if (!live || err instanceof OpenAI.APIError && !(err instanceof OpenAI.APIConnectionError)) throw describeUpstream(err);
      broken = err;
    }
    mapper ??= new ResponsesEventMapper(model);
    let upstreamId = resume?.upstreamId;
    resume = undefined;
    let progressed = false;
    try {
      for await (const batch of stream) {
        let seq: number | undefined;
        const out: AiEvent[] = [];
        for (const ev of batch) {
          if (ev.response?.id) live = upstreamId = ev.response.id;
          const n = ev.sequence_number;
          if (typeof n === 'number') {
            if (n <= fed) continue; // already seen on an earlier connection
            fed = n;
            progressed = true;
            if (replayThrough !== undefined && n <= replayThrough) {
              mapper.mapInto(ev, replayed); // state only: delivered before the restart
              replayed.length = 0;
              continue;
            }
            seq = n;
          }
          if (ev.type === 'response.created') {
            unreported = true;
            received = '';
          }
          if (TERMINAL.has(ev.type) && unreported) {
            unreported = false;
            opts.onUsage?.(reportedUsage(ev.response?.usage) ?? estimatedUsage(toInput(opts.messages).input, received));
          }
          mapper.mapInto(ev, out);
        }
        for (const e of out) if (e.type === 'text.delta' || e.type === 'reasoning_text.delta') received += e.delta;
        if (out.length) yield out;
        // Once per network chunk: everything mapped from it has been handed over by now.
        if (seq !== undefined && upstreamId) opts.onCursor?.({ upstreamId, sequenceNumber: seq });
      }
    } catch (err) {
      broken = err;
    }
    if (opts.signal?.aborted) throw new AiError('The response was cancelled.');
    // The connection to a background response broke (or closed early): it is still running
    // upstream, so pick it up where it stood. A few tries in a row without progress, then give up.
    if ((broken !== undefined || (!mapper.finished && !mapper.failure)) && live && !(broken instanceof AiError)) {
      reconnects = progressed ? 1 : reconnects + 1;
      if (reconnects <= MAX_RECONNECTS) {
        await Bun.sleep(RECONNECT_DELAY_MS * reconnects);
        resume = { upstreamId: live, sequenceNumber: fed };
        round--;
        continue;
      }
    }
    if (broken !== undefined) throw describeUpstream(broken, opts.signal);
    live = undefined;
    if (mapper.failure) throw new AiError(mapper.failure);
    if (!mapper.finished) throw new AiError('The AI provider ended the stream before the response was complete.');
    const finished = mapper;
    mapper = undefined;
    // A tool round is a new upstream response, numbered from 0.
    replayThrough = undefined;
    fed = -1;
    reconnects = 0;
    turn = undefined;
    if (finished.functionCalls.length) {
      const toolOutputs: { call_id: string; output: string }[] = [];
      const pending: AiEvent[] = [];
      for (const call of finished.functionCalls) {
        // Run before a restart (this round was replayed): its output and events are stored already.
        const ran = opts.toolOutputs?.find((o) => o.upstreamId === upstreamId && o.callId === call.callId)?.output;
        const output = ran ?? (await runTool(tools, call, (e) => pending.push(e), `${upstreamId ?? `round ${round}`}:${call.callId}`));
        toolOutputs.push({ call_id: call.callId, output });
        if (pending.length) yield pending.splice(0);
        // After the consumer took the tool's events, so the output is stored with them.
        if (ran === undefined && upstreamId) opts.onToolOutput?.({ upstreamId, callId: call.callId, output });
      }
      turn = { previousResponseId: upstreamId, toolOutputs };
    }
  }
  // Still calling tools when the rounds ran out: say so, rather than end as if it had answered.
  if (turn) throw new AiError('The model kept calling tools instead of answering.');
  } finally {
    // Stopped by the user (abort, or the consumer returning early): stop paying for the upstream run too.
    // Bounded: a cancel (or a truncate, or a conversation delete, which cancel first) must not
    // wait minutes on a provider that does not answer; the upstream run then ends on its own.
    if (live && opts.signal?.aborted && opts.signal.reason !== SHUTDOWN_REASON)
      await client.responses.cancel(live, { timeout: UPSTREAM_CANCEL_TIMEOUT_MS, maxRetries: 0 }).catch(() => undefined);
    // Stopped before its usage came: counted. Not at a shutdown: the next start resumes it and
    // hears its usage then.
    if (unreported && opts.signal?.reason !== SHUTDOWN_REASON) opts.onUsage?.(estimatedUsage(toInput(opts.messages).input, received));
  }
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

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
