import type { AppDeps } from '../deps';
import type { ApiResponseRow } from '../db/schema';
import { AiError, SHUTDOWN_REASON } from '../ai/ai.types';
import { OpenAiError } from '../http/errors';
import type { EventLog, EventWriter } from '../chat/event-log';
import { cancelWhereRunning, claimTurn, holdTurn, LEASE_LOST_REASON, letTurnGo } from '../chat/turn-leases';
import type { Tx, Work } from '../db/work';
import { findApiResponse, insertApiResponse, isApiTerminal, listInterruptedApiResponses, updateApiResponse } from './api-response.store';
import type { ChatMessage, ChatRequest } from './chat-request';
import { AnswerCollector } from './collect-answer';
import { keepAsConversation } from './keep-conversation';
import { ResponseEvents, type Ending, type ResponseEvent, type ResponseObject } from './responses-events';
import type { V1Target } from './upstream-call';
import { openStream } from './v1-target';
import { chatReport, type Meter } from './v1-usage';

/**
 * `background: true` (docs/openai-api.md, "Background responses"): the response runs as a task
 * of the server's task runner, its events written to its own event log as they come (the group
 * commit, as Parley's AI turns), held through the turn lease `response:<id>` like them
 * (src/chat/turn-leases.ts: renewed by the turn keeper, cancelled across instances on the bus),
 * so the caller may leave and come back for the rest (`starting_after`). A restart cannot pick up
 * the upstream request where it was: the response then ends `failed`, saying so.
 */
export const RESTART_MESSAGE = 'The server restarted before the response finished, and Parley cannot continue it: send the request again.';
const CANCELLED = 'The response was cancelled.';

/** Seconds a caller over the background cap is told to wait. */
const CAP_RETRY_AFTER_S = 10;

export interface BackgroundInput {
  userId: string;
  response: ResponseObject;
  target: V1Target;
  chat: ChatRequest;
  meter: Meter;
  inputTokens: number;
  /** `store: true`: the messages to keep, and the conversation they continue. */
  keep?: { messages: ChatMessage[]; conversationId?: string; assistantId?: string };
}

/** Create the row with its first event and start the task; a 429 when the user runs as many as PARLEY_RESEARCH_MAX_PER_USER allows. */
export async function startBackground(deps: AppDeps, log: EventLog, input: BackgroundInput): Promise<void> {
  if (!deps.tasks.hasCapacity(input.userId))
    throw new OpenAiError(429, 'Too many background responses are running for you; try again when one has finished.', 'requests', 'rate_limit_exceeded', null, { 'retry-after': String(CAP_RETRY_AFTER_S) });
  const now = deps.now();
  const events = new ResponseEvents(input.response);
  const writer = log.writer(input.response.id, 0);
  await deps.store.write(function* (tx) {
    yield* insertApiResponse(tx, {
      id: input.response.id,
      userId: input.userId,
      conversationId: null,
      status: 'queued',
      background: true,
      model: input.target.id,
      body: events.response,
      lastSeq: 0,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
    });
    yield* holdTurn(tx, deps, input.response.id);
    writer.add(events.created());
    yield* writer.writeIn(tx);
  });
  deps.tasks.start({ id: input.response.id, userId: input.userId, run: (signal) => runBackground(deps, input, events, writer, signal) });
}

async function runBackground(deps: AppDeps, input: BackgroundInput, events: ResponseEvents, writer: EventWriter, signal: AbortSignal): Promise<void> {
  const id = input.response.id;
  writer.emit(events.inProgress());
  await deps.store.write((tx) => updateApiResponse(tx, id, { status: 'in_progress', body: events.response }, deps.now()));
  const answer = new AnswerCollector();
  let ending: Ending = { status: 'completed' };
  // Refused or unreachable, the provider did no work: nothing to settle.
  let refused = false;
  try {
    const out: ResponseEvent[] = [];
    for await (const batch of await openStream(input.target, input.chat, signal)) {
      signal.throwIfAborted();
      for (const chunk of batch) {
        answer.add(chunk);
        events.add(chunk, out);
      }
      for (const e of out.splice(0)) writer.emit(e);
      // The database is behind: let the upstream wait rather than the heap grow.
      const room = writer.room();
      if (room) await room;
    }
    signal.throwIfAborted();
  } catch (err) {
    if (signal.aborted && (signal.reason === SHUTDOWN_REASON || signal.reason === LEASE_LOST_REASON)) {
      // Stopping, or another instance may hold it now: keep what was said; the next start (or the
      // instance that takes the lease) ends it with RESTART_MESSAGE.
      await writer.flush();
      if (signal.reason === SHUTDOWN_REASON) await deps.store.write((tx) => letTurnGo(tx, deps, id));
      await input.meter.settle(chatReport(input.target, answer, input.inputTokens));
      return;
    }
    refused = err instanceof OpenAiError;
    if (signal.aborted) ending = { status: 'cancelled', message: CANCELLED };
    else {
      const message = err instanceof AiError || err instanceof OpenAiError ? err.message : 'The response failed unexpectedly.';
      if (!(err instanceof AiError) && !(err instanceof OpenAiError)) deps.log.error('v1 background response failed', { responseId: id, cause: err instanceof Error ? err.stack : String(err) });
      ending = { status: 'failed', message };
    }
  }
  await finish(deps, events, writer, ending, (tx) =>
    input.keep && ending.status === 'completed'
      ? keepAsConversation(tx, { userId: input.userId, messages: input.keep.messages, answer, model: input.target.id, conversationId: input.keep.conversationId, assistantId: input.keep.assistantId }, deps.now())
      : undefined,
  );
  if (refused) await input.meter.release();
  else await input.meter.settle(chatReport(input.target, answer, input.inputTokens));
}

/**
 * The last events, the row's final state and the lease given back, in one transaction (their
 * events are published once it commits). `keep`: what `store: true` writes with them.
 */
async function finish(deps: AppDeps, events: ResponseEvents, writer: EventWriter, ending: Ending, keep?: (tx: Tx) => Work<string> | undefined): Promise<void> {
  const out: ResponseEvent[] = [];
  events.finish(ending, out);
  const id = events.response.id;
  // The batches still being written go first: the last one must be published last.
  await writer.idle();
  try {
    await deps.store.write(function* (tx) {
      const kept = keep?.(tx);
      const conversationId = kept ? yield* kept : undefined;
      for (const e of out) writer.add(e);
      yield* writer.writeIn(tx);
      yield* updateApiResponse(tx, id, { status: events.response.status as ApiResponseRow['status'], body: events.response, ...(conversationId ? { conversationId } : {}) }, deps.now());
      yield* letTurnGo(tx, deps, id);
    });
  } catch (err) {
    deps.log.error('the end of a v1 response could not be stored', { responseId: id, cause: err instanceof Error ? err.message : String(err) });
  }
}

/** A response no task runs any more (its instance died, or it was cancelled meanwhile), ended from its row. */
async function endFromRow(deps: AppDeps, log: EventLog, row: ApiResponseRow, ending: Ending): Promise<void> {
  const events = new ResponseEvents(structuredClone(row.body) as ResponseObject, row.lastSeq);
  await finish(deps, events, log.writer(row.id, row.lastSeq), ending);
}

/** Claim an interrupted response and read it again; undefined (no lease kept) when another instance has it or it ended. */
function* claimUnfinished(tx: Tx, deps: AppDeps, id: string, mode: 'orphan' | 'any'): Work<ApiResponseRow | undefined> {
  if (!(yield* claimTurn(tx, deps, id, mode))) return undefined;
  const row = yield* findApiResponse(tx, id);
  if (row && !isApiTerminal(row.status)) return row;
  yield* letTurnGo(tx, deps, id);
  return undefined;
}

/**
 * Background responses left unfinished by a stopped or dead instance, ended `failed` with
 * RESTART_MESSAGE: `any` (SQLite, at start) every one; `orphan` (PostgreSQL, at start and then
 * with the turn keeper's sweeps) those whose lease nobody holds.
 */
export async function endInterruptedApiResponses(deps: AppDeps, log: EventLog, mode: 'any' | 'orphan'): Promise<number> {
  let ended = 0;
  const rows = await deps.store.read((tx) => listInterruptedApiResponses(tx, deps.now(), mode === 'any'));
  for (const candidate of rows) {
    if (deps.tasks.isRunning(candidate.id)) continue;
    const row = await deps.store.write((tx) => claimUnfinished(tx, deps, candidate.id, mode));
    if (!row) continue;
    await endFromRow(deps, log, row, { status: 'failed', message: RESTART_MESSAGE });
    ended++;
  }
  return ended;
}

/**
 * Cancel a background response: its task stops and ends it; one another instance runs is
 * cancelled there (the bus), and this waits a moment for its row to say so; one no task runs is
 * ended here.
 */
export async function cancelBackground(deps: AppDeps, log: EventLog, row: ApiResponseRow): Promise<void> {
  const ended = async () => {
    const now = await deps.store.read((tx) => findApiResponse(tx, row.id));
    return !now || isApiTerminal(now.status);
  };
  if (await cancelWhereRunning(deps, row.id, ended)) return;
  const current = await deps.store.write((tx) => claimUnfinished(tx, deps, row.id, 'orphan'));
  if (current) await endFromRow(deps, log, current, { status: 'cancelled', message: CANCELLED });
}
