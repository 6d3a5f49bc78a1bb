import type { ApiResponseRow } from '../db/schema';
import { AiError } from '../ai/ai.types';
import { OpenAiError, openAiInvalid } from '../http/errors';
import { imageUrlPolicy } from '../net/image-url';
import type { EventLog } from '../chat/event-log';
import { followResponse } from '../chat/follow';
import { listItems } from '../chat/conversation.store';
import { findApiResponse, insertApiResponse, isApiTerminal } from './api-response.store';
import type { ChatMessage, ChatRequest } from './chat-request';
import { AnswerCollector } from './collect-answer';
import { historyOf, keepAsConversation } from './keep-conversation';
import { checkResponsesRequest, chatRequestOf } from './responses-input';
import { newResponseId, ResponseEvents, responseObject, type Ending, type ResponseEvent } from './responses-events';
import { cancelBackground, startBackground } from './background-responses';
import type { ChunkBatches, V1Target } from './upstream-call';
import { openStream, type ResolveTarget } from './v1-target';
import { withAssistant } from './v1-assistants';
import { beginCall, chatEstimate, chatReport, estimateInput, type Meter } from './v1-usage';
import { sseResponse, type V1Context } from './v1-route';
import { namedFrame, textStream } from './text-stream';

/**
 * The Responses API (docs/openai-api.md, "Responses"): `POST /v1/responses` answered whole,
 * streamed, or run in the background; `GET /v1/responses/{id}` (with `stream=true` and
 * `starting_after=N`: the events after N, then the live tail) and `POST .../cancel` for the
 * responses Parley keeps (background ones, and those made with `store: true`).
 */

const notFound = (id: string) => new OpenAiError(404, `No response found with id '${id}'.`, 'invalid_request_error', null, 'response_id');

/** The caller's own kept response, else the 404 (another user's is unknown too). */
async function ownResponse(ctx: V1Context, id: string): Promise<ApiResponseRow> {
  const row = await ctx.deps.store.read((tx) => findApiResponse(tx, id));
  if (!row || row.userId !== ctx.user.id) throw notFound(id);
  return row;
}

/** The conversation a `previous_response_id` continues, read back as messages. */
async function previousOf(ctx: V1Context, id: string): Promise<{ history: ChatMessage[]; conversationId: string }> {
  const row = await ctx.deps.store.read((tx) => findApiResponse(tx, id));
  if (!row || row.userId !== ctx.user.id) throw new OpenAiError(404, `Previous response with id '${id}' not found.`, 'invalid_request_error', 'previous_response_not_found', 'previous_response_id');
  const conversationId = row.conversationId;
  if (!conversationId)
    throw openAiInvalid(`The response '${id}' was not kept as a conversation, so it cannot be continued: make the first response with store: true.`, 'previous_response_id');
  const items = await ctx.deps.store.read((tx) => listItems(tx, conversationId));
  return { history: historyOf(items), conversationId };
}

export function createResponse(resolve: ResolveTarget, log: EventLog) {
  return async (ctx: V1Context): Promise<Response | object> => {
    const { deps } = ctx;
    const req = checkResponsesRequest(ctx.body);
    const previous = req.previous_response_id ? await previousOf(ctx, req.previous_response_id) : undefined;
    const history = previous?.history ?? [];
    const asked = chatRequestOf(req, history, imageUrlPolicy(deps.config));
    const target = await resolve(req.model, ctx.user);
    const chat = withAssistant(asked, target.assistant);
    const response = responseObject(newResponseId(), req, target.id, deps.now());
    const inputTokens = estimateInput(chat);
    // What `store: true` keeps: the messages this request adds (not the instructions, not the history).
    const added = asked.messages.slice((req.instructions ? 1 : 0) + history.length);
    const keep = req.store === true ? { messages: added, conversationId: previous?.conversationId, assistantId: target.assistant?.id } : undefined;
    const { meter, releaseSlot } = await beginCall(ctx, target, req.stream === true, chatEstimate(target, chat, inputTokens));
    const run = { ctx, target, chat, meter, inputTokens, keep, events: new ResponseEvents(response) };
    if (req.background === true) {
      // What the caller is answered with is the object as created (queued): the task changes it from now on.
      const created = structuredClone(response);
      try {
        await startBackground(deps, log, { userId: ctx.user.id, response, target, chat, meter, inputTokens, keep });
      } catch (err) {
        releaseSlot();
        await meter.release();
        throw err;
      }
      return req.stream === true ? followStream(ctx, log, response.id, 0, releaseSlot) : created;
    }
    const stop = new AbortController();
    const signal = AbortSignal.any([ctx.request.signal, deps.lifecycle.signal, stop.signal]);
    let batches: ChunkBatches;
    try {
      batches = await openStream(target, chat, signal);
    } catch (err) {
      releaseSlot();
      await meter.release();
      throw err;
    }
    if (req.stream !== true) {
      const out: ResponseEvent[] = [];
      const answer = new AnswerCollector();
      await collect(batches, run.events, answer, out).finally(() => ended(run, answer));
      run.events.finish({ status: 'completed' }, out);
      await keepResponse(run, answer);
      return run.events.response;
    }
    return sseResponse(textStream(responseFrames(run, batches, signal, releaseSlot), () => stop.abort(), deps.config.sseHeartbeatSeconds * 1000));
  };
}

interface Run {
  ctx: V1Context;
  target: V1Target;
  chat: ChatRequest;
  meter: Meter;
  inputTokens: number;
  keep: { messages: ChatMessage[]; conversationId?: string; assistantId?: string } | undefined;
  events: ResponseEvents;
}

async function collect(batches: ChunkBatches, events: ResponseEvents, answer: AnswerCollector, out: ResponseEvent[]): Promise<void> {
  for await (const batch of batches)
    for (const chunk of batch) {
      answer.add(chunk);
      events.add(chunk, out);
    }
}

const ended = (run: Run, answer: AnswerCollector) => run.meter.settle(chatReport(run.target, answer, run.inputTokens));

/** `store: true`: the exchange kept as a conversation, and the response with it (retrievable, and continued by `previous_response_id`). */
async function keepResponse(run: Run, answer: AnswerCollector): Promise<void> {
  const { keep, ctx, events } = run;
  if (!keep) return;
  const { deps, user } = ctx;
  const now = deps.now();
  const body = events.response;
  await deps.store.write(function* (tx) {
    const conversationId = yield* keepAsConversation(tx, { userId: user.id, messages: keep.messages, answer, model: run.target.id, conversationId: keep.conversationId, assistantId: keep.assistantId }, now);
    yield* insertApiResponse(tx, {
      id: body.id,
      userId: user.id,
      conversationId,
      status: body.status as ApiResponseRow['status'],
      background: false,
      model: run.target.id,
      body,
      lastSeq: 0,
      createdAt: now,
      updatedAt: now,
      finishedAt: now,
    });
  });
}

const frames = (events: ResponseEvent[]) => events.map((e) => namedFrame(e.type, JSON.stringify(e))).join('');

/** A response streamed as it is made; a failure mid-answer is its `response.failed` event. */
async function* responseFrames(run: Run, batches: ChunkBatches, signal: AbortSignal, releaseSlot: () => void): AsyncGenerator<string> {
  const { events } = run;
  const answer = new AnswerCollector();
  let ending: Ending = { status: 'completed' };
  try {
    yield frames([events.created(), events.inProgress()]);
    for await (const batch of batches) {
      const out: ResponseEvent[] = [];
      for (const chunk of batch) {
        answer.add(chunk);
        events.add(chunk, out);
      }
      if (out.length) yield frames(out);
    }
  } catch (err) {
    if (signal.aborted) return;
    ending = { status: 'failed', message: err instanceof AiError ? err.message : 'The AI provider failed while answering.' };
  } finally {
    releaseSlot();
    await ended(run, answer);
  }
  const out: ResponseEvent[] = [];
  events.finish(ending, out);
  if (ending.status === 'completed') await keepResponse(run, answer);
  yield frames(out);
}

/** A background response's events after `afterSeq`, then its live tail, until its last. */
function followStream(ctx: V1Context, log: EventLog, id: string, afterSeq: number, releaseSlot: () => void): Response {
  const stop = new AbortController();
  async function* texts(): AsyncGenerator<string> {
    try {
      for await (const chunk of followResponse(ctx.deps, id, afterSeq, AbortSignal.any([ctx.request.signal, stop.signal]), log)) yield chunk.toSSE();
    } finally {
      releaseSlot();
    }
  }
  // The follower sends its own comment lines on the heartbeat ticker (src/chat/follow.ts).
  return sseResponse(textStream(texts(), () => stop.abort(), 2 * ctx.deps.config.sseHeartbeatSeconds * 1000));
}

export function retrieveResponse(log: EventLog) {
  return async (ctx: V1Context): Promise<Response | object> => {
    const row = await ownResponse(ctx, ctx.params.id!);
    if (ctx.query.get('stream') !== 'true') return row.body;
    if (!row.background) throw openAiInvalid('Only responses made with background: true can be streamed again.', 'stream');
    const raw = ctx.query.get('starting_after');
    const after = raw === null || raw === '' ? -1 : Number(raw);
    if (!Number.isInteger(after) || after < -1) throw openAiInvalid('starting_after must be the sequence_number of an event (an integer).', 'starting_after');
    // An event's sequence number is its place in the log less one.
    return followStream(ctx, log, row.id, after + 1, await ctx.holdStream());
  };
}

export function cancelResponse(log: EventLog) {
  return async (ctx: V1Context): Promise<object> => {
    const row = await ownResponse(ctx, ctx.params.id!);
    if (!row.background) throw openAiInvalid('Only responses made with background: true can be cancelled.', 'response_id');
    if (isApiTerminal(row.status)) return row.body;
    await cancelBackground(ctx.deps, log, row);
    return (await ownResponse(ctx, row.id)).body;
  };
}

