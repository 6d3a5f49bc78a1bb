import type { AppDeps } from '../deps';
import type { Conversation, ResponseRow } from '../db/schema';
import { AiError, NO_PROVIDER_MESSAGE, SHUTDOWN_REASON, type AiEvent, type AiImage, type AiMessage, type StreamChatOptions } from '../ai/ai.types';
import { AppError, tooManyRequests } from '../http/errors';
import type { ChatTarget } from '../connections/resolver';
import { appendItem, createConversation, findConversationById, listItems, setConversationAssistant } from './conversation.store';
import { countUnfinishedOfUser, createResponse, eventsAfter, findResponseById, isTerminal, listOrphanedResponses, listUnfinishedResponses, setResponseStatus, toolOutputsOf } from './response.store';
import { cancelWhereRunning, claimTurn, holdTurn, LEASE_LOST_REASON, letTurnGo } from './turn-leases';
import { serializeOn, type Tx, type Work } from '../db/work';
import { findUser } from '../account/account.store';
import { endPendingApprovals } from '../tools/approval.store';
import { assistantOfConversation, canUseAssistant } from '../assistants/assistant.store';
import { turnAssistantOf } from '../assistants/assistant-resources';
import type { Assistant } from '../db/schema';
import { memoryForTurn } from '../memory/memory.prompt';
import { filePartOf, filesIntoMessage, type FilePart } from '../files/files-for-turn';
import { attachFiles } from '../files/file.store';
import type { FileRow } from '../db/schema';
import { endingEvent, type EventWriter } from './event-log';
import { checkImageUrl, imageUrlPolicy } from '../net/image-url';
import { meterCalls, type CallMeter } from '../usage/meter-calls';
import type { UsageCaller } from '../usage/usage.types';

/** Seconds a client over the concurrency cap is told to wait (Retry-After). */
const CAP_RETRY_AFTER_S = 10;
const TITLE_CHARS = 80;

const SYSTEM_PROMPT = 'You are Parley, a helpful assistant. Answer clearly; use Markdown where it helps.';
const STUDY_PROMPT =
  'You are Parley in study mode: a patient tutor. Guide the learner to the answer with questions, hints and small steps instead of handing over full solutions; check understanding as you go.';
const RESEARCH_PROMPT =
  "You are Parley doing deep research: search widely, compare sources, and write a structured report that cites its sources. Cite the user's documents you read with read_file by their file name, as you cite web pages.";

export const CANCELLED_MESSAGE = 'The response was cancelled.';
export const IMAGE_LEFT_OUT = 'An image of this message was left out: Parley does not pass its URL to the AI provider';
export const RESTART_MESSAGE = 'The server restarted before the response finished, and the AI provider cannot continue it.';

export interface StartInput {
  userId: string;
  kind: ResponseRow['kind'];
  message: string;
  images?: AiImage[];
  /** Files sent with the message, which the caller may read (docs/files.md, "In chat and research"). */
  files?: FileRow[];
  model?: string;
  /** An existing conversation the caller may write to; undefined makes a new one. */
  conversation?: Conversation;
  /** The request that started the turn: the log's lines about it carry it. */
  requestId?: string;
  /** The caller's subscription tier: the models it may name (docs/connections.md, "Tiers"), and its allowances (docs/usage.md). */
  tier?: string;
  /** An assistant the caller may use: the conversation (new or not) goes on with it (docs/assistants.md). */
  assistantId?: string;
  /** The API key the request came with: usage is shown per key (docs/usage.md). */
  apiKeyId?: string;
}

/**
 * Begin an AI turn: check the caps (429 before any stream), then in one transaction create the
 * conversation (when new), the user item and the response, and persist `conversation.created`
 * and `response.created`. The turn itself runs as a background task.
 */
export async function startResponse(deps: AppDeps, input: StartInput): Promise<ResponseRow> {
  // An unknown or forbidden model is a 400 here, before anything is written or streamed.
  const target = await deps.connections.chat(input.model, input.kind === 'research' ? 'research' : 'chat', { subscriptionTier: input.tier });
  if (target && !deps.tasks.hasCapacity(input.userId)) throw tooManyRequests(CAP_RETRY_AFTER_S);
  const now = deps.now();
  // The catalogue id: which connection answered stays readable on the response.
  const model = target?.id ?? input.model ?? '';
  const { response, writer } = await deps.store.write(function* (tx) {
    if (target && tx.dialect === 'pg') {
      // Several instances share the database: the per-user cap counts the turns running on all of
      // them, one start at a time per user (the lock), so two instances cannot both let one in.
      yield* serializeOn(tx, `turns:${input.userId}`);
      if ((yield* countUnfinishedOfUser(tx, input.userId)) >= deps.config.researchMaxPerUser) throw tooManyRequests(CAP_RETRY_AFTER_S);
    }
    const conversation = input.conversation ?? (yield* createConversation(tx, { ownerId: input.userId, title: titleOf(input.message), assistantId: input.assistantId }, now));
    if (input.conversation && input.assistantId && input.conversation.assistantId !== input.assistantId) yield* setConversationAssistant(tx, conversation.id, input.assistantId);
    yield* appendItem(
      tx,
      {
        conversationId: conversation.id,
        role: 'user',
        content: input.message,
        authorId: input.userId,
        parts: [...(input.images ?? []).map((i) => ({ type: 'input_image', ...i })), ...(input.files ?? []).map(filePartOf)],
      },
      now,
    );
    // The conversation's writers may read them from now on, as the model does.
    if (input.files?.length) yield* attachFiles(tx, input.files.map((f) => f.id), conversation.id, now);
    const response = yield* createResponse(tx, { conversationId: conversation.id, userId: input.userId, kind: input.kind, model, input: { message: input.message, images: input.images } }, now);
    // This instance runs the turn (src/chat/turn-leases.ts).
    yield* holdTurn(tx, deps, response.id);
    const writer = deps.events.writer(response.id, 0);
    if (!input.conversation) writer.add({ type: 'conversation.created', conversationId: conversation.id });
    // `model`: which model answers (Parley's addition; the web app shows it under the answer).
    writer.add({ type: 'response.created', responseId: response.id, model });
    yield* writer.writeIn(tx);
    return { response, writer };
  });
  if (!target) {
    await finish(deps, response, writer, 'failed', NO_PROVIDER_MESSAGE);
    return (await deps.store.read((tx) => findResponseById(tx, response.id)))!;
  }
  const caller = { userId: input.userId, apiKeyId: input.apiKeyId, tier: input.tier };
  deps.tasks.start({ id: response.id, userId: input.userId, run: (signal) => runResponse(deps, response, writer, signal, undefined, input.requestId, target, caller) });
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
  resolved?: ChatTarget,
  caller?: Omit<UsageCaller, 'responseId'>,
): Promise<void> {
  const where = { requestId, responseId: response.id };
  await deps.store.write((tx) => setResponseStatus(tx, response.id, 'in_progress', deps.now()));
  const output = resume ?? { text: '', parts: [] };
  let meter: CallMeter | undefined;
  try {
    // A resumed turn finds its connection again by the model it recorded (gone: it fails saying so).
    const target = resolved ?? (await targetOf(deps, response));
    const ai = target.provider;
    const user = await deps.store.read((tx) => findUser(tx, response.userId));
    // Off (`enableMemories`): no memory in the prompt and no memory tools (src/memory/).
    const memory = await memoryForTurn(deps, user);
    const warn: StreamChatOptions['warn'] = (msg, fields) => deps.log.warn(msg, { ...where, ...fields });
    // The conversation's assistant, as it is now: its instructions and its choice of tools.
    // One this turn's user may no longer use (unshared, their tier changed) no longer answers.
    const remembered = await deps.store.read((tx) => assistantOfConversation(tx, response.conversationId));
    const assistant = remembered && user && canUseAssistant(remembered, user) ? remembered : undefined;
    const streamOpts: StreamChatOptions = {
      model: target.model,
      research: response.kind === 'research',
      messages: resume ? [] : await buildMessages(deps, response, memory?.message, assistant),
      // What this user may use now, from every domain's source (src/tools/; everyday chat's
      // `web_search` and the MCP servers' tools among them, docs/chat.md, docs/mcp.md).
      tools: await deps.tools.forTurn({
        deps,
        kind: response.kind,
        user: { id: response.userId, subscriptionTier: user?.subscriptionTier ?? '', enableMemories: !!memory },
        conversationId: response.conversationId,
        responseId: response.id,
        provider: ai.name,
        ...(assistant ? { assistant: await turnAssistantOf(deps, assistant) } : {}),
        warn,
        // "Ask first" tools wait for this user's answer, told in this response's stream.
        stream: { writer, signal },
        apiKeyId: caller?.apiKeyId,
        signal,
      }),
      signal,
      onCursor: (c) => writer.setCursor(c),
      onToolOutput: (toolOutput) => writer.recordToolOutput(toolOutput),
      resumeFrom: resume && response.upstreamId != null ? { upstreamId: response.upstreamId, sequenceNumber: response.upstreamSeq ?? -1 } : undefined,
      toolOutputs: resume ? await deps.store.read((tx) => toolOutputsOf(tx, response.id)) : undefined,
      warn,
      // Its temperature, top_p and answer limit, for every provider (docs/assistants.md, "Parameters").
      ...(assistant ? { sampling: assistant.parameters } : {}),
    };
    // Usage metering (docs/usage.md): over a quota the turn ends here, before anything goes upstream.
    const usageCaller = { ...caller, userId: response.userId, responseId: response.id, ...(assistant ? { assistantId: assistant.id } : {}) };
    meter = await meterCalls(deps, { caller: usageCaller, kind: response.kind, target, messages: streamOpts.messages, resumed: !!resume });
    streamOpts.onUsage = meter.onUsage;
    const batches = ai.streamChatBatches ? ai.streamChatBatches(streamOpts) : single(ai.streamChat(streamOpts));
    for await (const batch of batches) {
      signal.throwIfAborted();
      for (const event of batch) {
        collectOutput(output, event);
        writer.emit(event);
      }
      // The database is behind: let the upstream wait rather than the heap grow.
      const room = writer.room();
      if (room) await room;
    }
    signal.throwIfAborted();
    await finish(deps, response, writer, 'completed', undefined, output);
  } catch (err) {
    if (signal.aborted && (signal.reason === SHUTDOWN_REASON || signal.reason === LEASE_LOST_REASON)) {
      // Parley is stopping, or another instance may own the turn now: keep what was relayed. At
      // a stop the lease goes too, so another instance takes the turn over at once (resumes or
      // fails it); on SQLite the next start does.
      await writer.flush();
      if (signal.reason === SHUTDOWN_REASON) await deps.store.write((tx) => letTurnGo(tx, deps, response.id));
      return;
    }
    if (signal.aborted) await finish(deps, response, writer, 'cancelled', CANCELLED_MESSAGE, output);
    else {
      const message = err instanceof AiError ? err.message : 'The response failed unexpectedly.';
      // What the upstream said (a template's traceback) is for the operator, not the user.
      if (err instanceof AiError) deps.log.warn('response failed', { ...where, error: message, ...(err.detail ? { upstream: err.detail } : {}) });
      else deps.log.error('response failed', { ...where, cause: err instanceof Error ? err.stack : String(err) });
      await finish(deps, response, writer, 'failed', message, output);
    }
  } finally {
    // Not awaited: the task ends with its row (followers take a finished row with no task for the
    // end); the reservation goes once the last call's usage is written.
    void meter?.close();
  }
}

/** The provider and upstream model a stored response names; an AiError the user can read when it is gone. */
async function targetOf(deps: AppDeps, response: ResponseRow): Promise<ChatTarget> {
  let target: ChatTarget | undefined;
  try {
    target = await deps.connections.chat(response.model || undefined, response.kind === 'research' ? 'research' : 'chat');
  } catch (err) {
    if (err instanceof AppError) throw new AiError(err.message);
    throw err;
  }
  if (!target) throw new AiError(NO_PROVIDER_MESSAGE);
  return target;
}

const canResume = (deps: AppDeps, response: ResponseRow) =>
  targetOf(deps, response).then(
    (t) => t.provider.canResume,
    () => false,
  );

async function* single<T>(events: AsyncIterable<T>): AsyncGenerator<T[]> {
  for await (const e of events) yield [e];
}

/** The events an answer keeps in its `parts` (docs/research.md, "What is stored for the conversation"). */
const KEPT_EVENTS = new Set<AiEvent['type']>([
  'web_search.completed',
  'web_page.read',
  // The documents the answer read, its sources beside the web pages: {itemId, fileId, filename}.
  'read_file.in_progress',
  'widget.created',
  'image_generation.completed',
  'edit_image.completed',
  // A video made, or why not: a reload shows the player or the error (docs/video.md).
  'generate_video.completed',
  'generate_video.error',
  'history.completed',
  // An MCP call and what it showed (its images are the user's files).
  'mcp_call.in_progress',
  'mcp_call.completed',
  // Code the model ran and what it gave (its files are the user's): docs/code-interpreter.md.
  'code_interpreter.in_progress',
  'code_interpreter.completed',
]);

/**
 * What the stored answer keeps of an event: its text, and search results, sources, widgets and
 * images on the assistant item so a reloaded conversation shows them.
 */
function collectOutput(output: { text: string; parts: unknown[] }, event: AiEvent): void {
  if (event.type === 'text.delta') output.text += event.delta;
  else if (KEPT_EVENTS.has(event.type)) output.parts.push(event);
}

async function finish(
  deps: AppDeps,
  response: ResponseRow,
  writer: EventWriter,
  status: 'completed' | 'failed' | 'cancelled',
  error?: string,
  output?: { text: string; parts: unknown[] },
): Promise<void> {
  const now = deps.now();
  function* store(tx: Tx, lastSeq?: number): Work<void> {
    // The answer keeps the model that wrote it as a part of its own, `{type: "response.model", model}`.
    if (output && (output.text || output.parts.length))
      yield* appendItem(tx, { conversationId: response.conversationId, role: 'assistant', content: output.text, parts: [...output.parts, { type: 'response.model', model: response.model }] }, now);
    yield* setResponseStatus(tx, response.id, status, now, error, lastSeq);
    // A call still waiting for its approval will not run now.
    yield* endPendingApprovals(tx, response.id, now);
    yield* letTurnGo(tx, deps, response.id);
  }
  // The turn's code interpreter, if it ran code, is not needed any more.
  deps.sandboxes.endTurn(response.id);
  const ending = endingEvent(status, error);
  // The number the last event gets, stored or not (the fallback below keeps it on the row).
  const seq = writer.lastSeq + 1;
  // The batches still being written go first: the last one must be published last.
  await writer.idle();
  try {
    // Published after the commit: followers see `done` only once the answer and the status are stored.
    await deps.store.write(function* (tx) {
      yield* store(tx);
      writer.add(ending);
      yield* writer.writeIn(tx);
    });
  } catch (err) {
    // The event log refuses this response (its writer failed earlier, or the write did now).
    // Still store how the turn ended and what it said, and the number its last event would have
    // had: followers, told now, and resumes, later, get that event from the row (follow.ts).
    deps.log.error('the last event of a response could not be stored', { responseId: response.id, cause: err instanceof Error ? err.message : String(err) });
    try {
      await deps.store.write((tx) => store(tx, seq));
      deps.events.publish(response.id, [{ seq, data: JSON.stringify(ending) }]);
    } catch (again) {
      deps.log.error('the end of a response could not be stored', { responseId: response.id, cause: again instanceof Error ? again.message : String(again) });
    }
  }
  if (response.kind === 'research') {
    // The push's body names the conversation (docs/extras.md): its title as the user sees it now,
    // renamed or not, which a later turn's message is not.
    const title = (await deps.store.read((tx) => findConversationById(tx, response.conversationId)))?.title || titleOf(response.input.message);
    void deps.notifier
      .researchStatus({ userId: response.userId, conversationId: response.conversationId, responseId: response.id, status, title })
      .catch(() => undefined);
  }
}

async function buildMessages(deps: AppDeps, response: ResponseRow, memories?: AiMessage, assistant?: Assistant): Promise<AiMessage[]> {
  const { conversation, all } = await deps.store.read(function* (tx) {
    return { conversation: yield* findConversationById(tx, response.conversationId), all: yield* listItems(tx, response.conversationId) };
  });
  const base = response.kind === 'research' ? RESEARCH_PROMPT : conversation?.studyMode ? STUDY_PROMPT : SYSTEM_PROMPT;
  // An assistant's instructions come after Parley's own, named as its.
  const system = assistant?.instructions.trim() ? `${base}\n\nYou answer as the assistant "${assistant.name}". Its instructions:\n${assistant.instructions.trim()}` : base;
  const items = all.filter((i) => i.role === 'user' || i.role === 'assistant');
  const messages: AiMessage[] = [{ role: 'system', content: system }, ...(memories ? [memories] : [])];
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
    const message: AiMessage = { role: item.role as 'user' | 'assistant', content, ...(images.length ? { images } : {}) };
    const files = (item.parts as { type?: string }[]).filter((p): p is FilePart => p?.type === 'input_file');
    messages.push(files.length ? await filesIntoMessage(deps, message, files) : message);
  }
  return messages;
}

/**
 * Interrupted turns: resumed when the provider can (an OpenAI background response: retrieve with
 * `starting_after`), otherwise ended as `failed` with an `error` event. `any` (SQLite, at start):
 * every unfinished turn, whose owner was this server's previous process. `orphan` (PostgreSQL,
 * at start and then every few seconds): only those no live instance holds the lease of; each is
 * claimed first, so one instance takes it over (src/chat/turn-leases.ts).
 */
export async function resumeInterruptedResponses(deps: AppDeps, mode: 'any' | 'orphan' = 'any'): Promise<{ resumed: number; failed: number }> {
  let resumed = 0;
  let failed = 0;
  const candidates = await deps.store.read((tx) => (mode === 'any' ? listUnfinishedResponses(tx) : listOrphanedResponses(tx, deps.now())));
  for (const candidate of candidates) {
    if (deps.tasks.isRunning(candidate.id)) continue;
    // Claimed, then read again: the previous owner may have written more before it stopped.
    const response = await deps.store.write((tx) => claimUnfinished(tx, deps, candidate.id, mode));
    if (!response) continue;
    const writer = deps.events.writer(response.id, response.lastSeq);
    // What the turn had said and shown so far: a resumed turn relays only what comes next, and
    // the answer it stores at the end must hold both (a canvas made before the restart too); a
    // failed one keeps it, as a turn failing on its own does.
    const output = await storedOutput(deps, response.id);
    if (response.upstreamId && (await canResume(deps, response))) {
      deps.tasks.start({ id: response.id, userId: response.userId, run: (signal) => runResponse(deps, response, writer, signal, output) });
      resumed++;
    } else {
      await finish(deps, response, writer, 'failed', RESTART_MESSAGE, output);
      failed++;
    }
  }
  return { resumed, failed };
}

/** Claim an interrupted turn and read it again; undefined (and no lease kept) when another instance has it or it has ended. */
function* claimUnfinished(tx: Tx, deps: AppDeps, responseId: string, mode: 'any' | 'orphan'): Work<ResponseRow | undefined> {
  if (!(yield* claimTurn(tx, deps, responseId, mode))) return undefined;
  const row = yield* findResponseById(tx, responseId);
  if (row && !isTerminal(row.status)) return row;
  yield* letTurnGo(tx, deps, responseId);
  return undefined;
}

/**
 * Cancel a running response: its task stops and ends the row. A turn another instance runs is
 * cancelled there (through the bus), and this waits a moment for its row to say so. A row no task
 * owns (its owner died and nobody took it over yet) is ended here, or it would be listed as
 * running until the takeover.
 */
export async function cancelResponse(deps: AppDeps, response: ResponseRow): Promise<void> {
  const ended = async () => {
    const row = await deps.store.read((tx) => findResponseById(tx, response.id));
    return !row || isTerminal(row.status);
  };
  if (await cancelWhereRunning(deps, response.id, ended)) return;
  // No task owned it, or its task ended while the caller got here (truncate and delete cancel a
  // conversation's turns one after another): the row as it is now decides. Ending a turn that has
  // just completed would mark it cancelled and number its error event from a stale last_seq.
  const current = await deps.store.write((tx) => claimUnfinished(tx, deps, response.id, 'orphan'));
  if (!current) return;
  await finish(deps, current, deps.events.writer(current.id, current.lastSeq), 'cancelled', CANCELLED_MESSAGE, await storedOutput(deps, current.id));
}

/** A response's answer so far, from its stored events: for a turn ended by something other than its own task. */
async function storedOutput(deps: AppDeps, responseId: string): Promise<{ text: string; parts: unknown[] }> {
  const output = { text: '', parts: [] as unknown[] };
  for (const e of await deps.store.read((tx) => eventsAfter(tx, responseId, 0))) collectOutput(output, JSON.parse(e.data) as AiEvent);
  return output;
}

const titleOf = (message: string) => {
  const line = message.trim().split('\n')[0] ?? '';
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
};
