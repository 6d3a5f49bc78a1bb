import type { AppDeps } from '../deps';
import { writeTx, type Db } from '../db/connection';
import type { Conversation, ResponseRow } from '../db/schema';
import { AiError, NO_PROVIDER_MESSAGE, SHUTDOWN_REASON, type AiEvent, type AiImage, type AiMessage, type StreamChatOptions } from '../ai/ai.types';
import { tooManyRequests } from '../http/errors';
import { appendItem, createConversation, findConversationById, listItems } from './conversation.store';
import { createResponse, findResponseById, isTerminal, listUnfinishedResponses, setResponseStatus } from './response.store';
import { chatTools } from './chat.tools';
import { endingEvent, type EventWriter } from './event-log';
import { checkImageUrl, imageUrlPolicy } from '../net/image-url';

/** Seconds a client over the concurrency cap is told to wait (Retry-After). */
const CAP_RETRY_AFTER_S = 10;
const TITLE_CHARS = 80;

const SYSTEM_PROMPT = 'You are Parley, a helpful assistant. Answer clearly; use Markdown where it helps.';
const STUDY_PROMPT =
  'You are Parley in study mode: a patient tutor. Guide the learner to the answer with questions, hints and small steps instead of handing over full solutions; check understanding as you go.';
const RESEARCH_PROMPT = 'You are Parley doing deep research: search widely, compare sources, and write a structured report that cites its sources.';

export const CANCELLED_MESSAGE = 'The response was cancelled.';
export const IMAGE_LEFT_OUT = 'An image of this message was left out: Parley does not pass its URL to the AI provider';
export const RESTART_MESSAGE = 'The server restarted before the response finished, and the AI provider cannot continue it.';

export interface StartInput {
  userId: string;
  kind: ResponseRow['kind'];
  message: string;
  images?: AiImage[];
  model?: string;
  /** An existing conversation the caller may write to; undefined makes a new one. */
  conversation?: Conversation;
  /** The request that started the turn: the log's lines about it carry it. */
  requestId?: string;
}

/**
 * Begin an AI turn: check the caps (429 before any stream), then in one transaction create the
 * conversation (when new), the user item and the response, and persist `conversation.created`
 * and `response.created`. The turn itself runs as a background task.
 */
export function startResponse(deps: AppDeps, input: StartInput): ResponseRow {
  if (deps.ai && !deps.tasks.hasCapacity(input.userId)) throw tooManyRequests(CAP_RETRY_AFTER_S);
  const now = deps.now();
  const model = input.model ?? (input.kind === 'research' ? deps.config.researchModel : deps.config.aiModel);
  const { response, writer, publish } = writeTx(deps.db, (tx) => {
    const conversation = input.conversation ?? createConversation(tx, { ownerId: input.userId, title: titleOf(input.message) }, now);
    appendItem(
      deps.db,
      { conversationId: conversation.id, role: 'user', content: input.message, authorId: input.userId, parts: (input.images ?? []).map((i) => ({ type: 'input_image', ...i })) },
      now,
    );
    const response = createResponse(tx, { conversationId: conversation.id, userId: input.userId, kind: input.kind, model, input: { message: input.message, images: input.images } }, now);
    const writer = deps.events.writer(response.id, 0);
    if (!input.conversation) writer.emit({ type: 'conversation.created', conversationId: conversation.id });
    writer.emit({ type: 'response.created', responseId: response.id });
    return { response, writer, publish: writer.flushInTx() };
  });
  publish();
  if (!deps.ai) {
    finish(deps, response, writer, 'failed', NO_PROVIDER_MESSAGE);
    return findResponseById(deps.db, response.id)!;
  }
  deps.tasks.start({ id: response.id, userId: input.userId, run: (signal) => runResponse(deps, response, writer, signal, undefined, input.requestId) });
  return response;
}

/** The body of a response's task: stream the provider's events into the log, then finish the row. */
async function runResponse(
  deps: AppDeps,
  response: ResponseRow,
  writer: EventWriter,
  signal: AbortSignal,
  resume?: { text: string; parts: unknown[] },
  requestId?: string,
): Promise<void> {
  const ai = deps.ai!;
  const where = { requestId, responseId: response.id };
  setResponseStatus(deps.db, response.id, 'in_progress', deps.now());
  const output = resume ?? { text: '', parts: [] };
  try {
    const streamOpts: StreamChatOptions = {
      model: response.model,
      research: response.kind === 'research',
      // Everyday chat may search the web too, through the configured search provider (the
      // `web_search` function of openai-chat, docs/chat.md). Not on openai-responses: there it
      // would mean OpenAI's own paid search on every turn, which nobody configured.
      webSearch: response.kind === 'chat' && ai.name === 'openai-chat',
      messages: resume ? [] : buildMessages(deps, response),
      tools: chatTools(deps, { userId: response.userId, conversationId: response.conversationId, responseId: response.id }),
      signal,
      onCursor: (c) => writer.setCursor(c),
      onToolOutput: (toolOutput) => writer.recordToolOutput(toolOutput),
      resumeFrom: resume && response.upstreamId != null ? { upstreamId: response.upstreamId, sequenceNumber: response.upstreamSeq ?? -1 } : undefined,
      toolOutputs: resume ? deps.events.statements.toolOutputsOf(response.id) : undefined,
      warn: (msg, fields) => deps.log.warn(msg, { ...where, ...fields }),
    };
    const batches = ai.streamChatBatches ? ai.streamChatBatches(streamOpts) : single(ai.streamChat(streamOpts));
    for await (const batch of batches) {
      signal.throwIfAborted();
      for (const event of batch) {
        collectOutput(output, event);
        writer.emit(event);
      }
    }
    signal.throwIfAborted();
    finish(deps, response, writer, 'completed', undefined, output);
  } catch (err) {
    if (signal.aborted && signal.reason === SHUTDOWN_REASON) {
      // Parley is stopping: keep what was relayed; the next start resumes or fails the row.
      writer.flush();
      return;
    }
    if (signal.aborted) finish(deps, response, writer, 'cancelled', CANCELLED_MESSAGE, output);
    else {
      const message = err instanceof AiError ? err.message : 'The response failed unexpectedly.';
      // What the upstream said (a template's traceback) is for the operator, not the user.
      if (err instanceof AiError) deps.log.warn('response failed', { ...where, error: message, ...(err.detail ? { upstream: err.detail } : {}) });
      else deps.log.error('response failed', { ...where, cause: err instanceof Error ? err.stack : String(err) });
      finish(deps, response, writer, 'failed', message, output);
    }
  }
}

async function* single<T>(events: AsyncIterable<T>): AsyncGenerator<T[]> {
  for await (const e of events) yield [e];
}

/**
 * What the stored answer keeps of an event: its text, and search results and widgets on the
 * assistant item so a reloaded conversation shows them.
 */
function collectOutput(output: { text: string; parts: unknown[] }, event: AiEvent): void {
  if (event.type === 'text.delta') output.text += event.delta;
  else if (event.type === 'web_search.completed' || event.type === 'web_page.read' || event.type === 'widget.created' || event.type === 'image_generation.completed' || event.type === 'history.completed')
    output.parts.push(event);
}

function finish(
  deps: AppDeps,
  response: ResponseRow,
  writer: EventWriter,
  status: 'completed' | 'failed' | 'cancelled',
  error?: string,
  output?: { text: string; parts: unknown[] },
): void {
  const now = deps.now();
  const store = (tx: Db, lastSeq?: number) => {
    if (output && (output.text || output.parts.length))
      appendItem(deps.db, { conversationId: response.conversationId, role: 'assistant', content: output.text, parts: output.parts }, now);
    setResponseStatus(tx, response.id, status, now, error, lastSeq);
  };
  const ending = endingEvent(status, error);
  // The number the last event gets, stored or not (the fallback below keeps it on the row).
  const seq = writer.lastSeq + 1;
  let publish: () => void;
  try {
    publish = writeTx(deps.db, (tx) => {
      store(tx);
      writer.emit(ending);
      return writer.flushInTx();
    });
  } catch (err) {
    // The event log refuses this response (its writer failed earlier, or the write did now).
    // Still store how the turn ended and what it said, and the number its last event would have
    // had: followers, told now, and resumes, later, get that event from the row (follow.ts).
    deps.log.error('the last event of a response could not be stored', { responseId: response.id, cause: err instanceof Error ? err.message : String(err) });
    publish = () => {};
    try {
      writeTx(deps.db, (tx) => store(tx, seq));
      publish = () => deps.events.publish(response.id, [{ seq, data: JSON.stringify(ending) }]);
    } catch (again) {
      deps.log.error('the end of a response could not be stored', { responseId: response.id, cause: again instanceof Error ? again.message : String(again) });
    }
  }
  // After the commit: followers see `done` only once the answer and the status are stored.
  publish();
  if (response.kind === 'research') {
    // The push's body names the conversation (docs/extras.md): its title as the user sees it now,
    // renamed or not, which a later turn's message is not.
    const title = findConversationById(deps.db, response.conversationId)?.title || titleOf(response.input.message);
    void deps.notifier
      .researchStatus({ userId: response.userId, conversationId: response.conversationId, responseId: response.id, status, title })
      .catch(() => undefined);
  }
}

function buildMessages(deps: AppDeps, response: ResponseRow): AiMessage[] {
  const conversation = findConversationById(deps.db, response.conversationId);
  const system = response.kind === 'research' ? RESEARCH_PROMPT : conversation?.studyMode ? STUDY_PROMPT : SYSTEM_PROMPT;
  const items = listItems(deps.db, response.conversationId).filter((i) => i.role === 'user' || i.role === 'assistant');
  const messages: AiMessage[] = [{ role: 'system', content: system }];
  const policy = imageUrlPolicy(deps.config);
  for (const item of items) {
    const images: AiImage[] = [];
    let content = item.content;
    for (const p of item.parts as { type?: string; imageUrl?: string; detail?: AiImage['detail'] }[]) {
      if (p?.type !== 'input_image' || typeof p.imageUrl !== 'string') continue;
      const checked = checkImageUrl(p.imageUrl, policy);
      // Stored by an earlier turn, before the rule existed or while PARLEY_AI_IMAGE_ALLOW_LAN was
      // on: left out, with a note the model can see, rather than handed to a model server that
      // must not fetch it. Failing the turn instead would break every later turn of the conversation.
      if (!checked.ok) content += `\n[${IMAGE_LEFT_OUT} (${checked.reason}).]`;
      else images.push({ imageUrl: checked.url, ...(p.detail ? { detail: p.detail } : {}) });
    }
    messages.push({ role: item.role as 'user' | 'assistant', content, ...(images.length ? { images } : {}) });
  }
  return messages;
}

/**
 * At start-up: responses left `queued`/`in_progress` by a previous process are resumed when the
 * provider can (an OpenAI background response: retrieve with `starting_after`), otherwise they
 * end as `failed` with an `error` event.
 */
export function resumeInterruptedResponses(deps: AppDeps): { resumed: number; failed: number } {
  let resumed = 0;
  let failed = 0;
  for (const response of listUnfinishedResponses(deps.db)) {
    const writer = deps.events.writer(response.id, response.lastSeq);
    // What the turn had said and shown so far: a resumed turn relays only what comes next, and
    // the answer it stores at the end must hold both (a canvas made before the restart too); a
    // failed one keeps it, as a turn failing on its own does.
    const output = storedOutput(deps, response.id);
    if (deps.ai?.canResume && response.upstreamId) {
      deps.tasks.start({ id: response.id, userId: response.userId, run: (signal) => runResponse(deps, response, writer, signal, output) });
      resumed++;
    } else {
      finish(deps, response, writer, 'failed', RESTART_MESSAGE, output);
      failed++;
    }
  }
  return { resumed, failed };
}

/**
 * Cancel a running response: its task stops and ends the row. A row no task owns (start-up
 * normally resumes or fails every one) is ended here, or it would be listed as running forever.
 */
export async function cancelResponse(deps: AppDeps, response: ResponseRow): Promise<void> {
  if (await deps.tasks.cancel(response.id)) return;
  // No task owned it, or its task ended while the caller got here (truncate and delete cancel a
  // conversation's turns one after another): the row as it is now decides. Ending a turn that has
  // just completed would mark it cancelled and number its error event from a stale last_seq.
  const current = findResponseById(deps.db, response.id);
  if (!current || isTerminal(current.status)) return;
  finish(deps, current, deps.events.writer(current.id, current.lastSeq), 'cancelled', CANCELLED_MESSAGE, storedOutput(deps, current.id));
}

/** A response's answer so far, from its stored events: for a turn ended by something other than its own task. */
function storedOutput(deps: AppDeps, responseId: string): { text: string; parts: unknown[] } {
  const output = { text: '', parts: [] as unknown[] };
  for (const e of deps.events.statements.eventsAfter(responseId, 0)) collectOutput(output, JSON.parse(e.data) as AiEvent);
  return output;
}

const titleOf = (message: string) => {
  const line = message.trim().split('\n')[0] ?? '';
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
};
