import { t } from 'elysia';
import { IMAGE_BODY_BYTES, defineOperation, type OpContext } from '../http/operation';
import { invalidInput, notFound, type ValidationIssue } from '../http/errors';
import { checkImageUrl, imageUrlPolicy } from '../net/image-url';
import { readLastEventId } from '../http/sse';
import { canWriteConversation, findConversationById } from './conversation.store';
import { findResponseById, isTerminal } from './response.store';
import { errorOnlyStream, followResponse, parseEventId } from './follow';
import { cancelResponse, startResponse } from './respond';
import type { AppDeps } from '../deps';
import type { FileRow, User } from '../db/schema';
import { canReadFile, canSendFile, findFileById } from '../files/file.store';
import { usableAssistant } from '../assistants/assistants.routes';
import { apiKeyOf } from '../usage/meter-calls';

const Image = t.Object({ imageUrl: t.String({ minLength: 1 }), detail: t.Optional(t.Union([t.Literal('auto'), t.Literal('high'), t.Literal('low')])) });
const TurnInput = t.Object({
  message: t.String(),
  conversationId: t.Optional(t.String()),
  model: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  images: t.Optional(t.Array(Image, { maxItems: 16 })),
  /** Parley's addition: ids of files sent with the message (docs/files.md, "Access": the caller's own, or one already attached to this conversation). */
  files: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 100 }), { maxItems: 10 })),
  /** Parley's addition: the assistant that answers (docs/assistants.md); the conversation keeps it for its later turns. */
  assistantId: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
});

/** The data of one frame: `type` selects the event (the spec's deep-research union). */
const StreamEvent = t.Object({ type: t.String() }, { additionalProperties: true, description: 'One event of the deep-research union; see docs/research.md.' });

const STREAM_DESCRIPTION =
  'Answers `text/event-stream`. Every frame is `event: message` with `id: <responseId>:<seq>` and JSON data whose `type` selects the event: ' +
  '`conversation.created` (only for a new conversation) → `response.created` → output events → `done`, or `error` {message} and the end. ' +
  'An image URL the AI provider must not be given (anything but `data:image/...` and `https:` to a public host, unless `PARLEY_AI_IMAGE_ALLOW_LAN`) → 400 with `issues` before the stream. ' +
  '`assistantId`: an assistant the caller may use (assistants/list; else 400 with `issues` before the stream): its instructions, model and tools answer, and the conversation keeps it for its later turns. ' +
  '`files`: ids of files the caller may read; the caller\'s own, or another user\'s only in a conversation it is attached to already (else 400 with `issues`, before the stream). ' +
  'Other failures after authentication are in-stream `error` events. The turn runs in the background: a request carrying `Last-Event-ID` resumes ' +
  'that response after that event instead of starting new work. Quiet streams carry `{"type":"keepalive"}` frames (no id) and comment lines. ' +
  'Over the concurrency cap → 429 before the stream.';

/** Who may follow or cancel a response: whoever started it, and the conversation's owner and writers. */
export function canSeeResponse(deps: AppDeps, user: User, responseId: string) {
  return deps.store.read(function* (tx) {
    const r = yield* findResponseById(tx, responseId);
    if (!r) return undefined;
    return r.userId === user.id || (yield* canWriteConversation(tx, r.conversationId, user.id)) ? r : undefined;
  });
}

/**
 * The request's images as the AI provider will get them, or a 400 naming each refused URL: the
 * model server may fetch them (src/net/image-url.ts). Checked before a reconnect too, so one
 * request body answers alike whether or not it carries Last-Event-ID.
 */
function checkedImages(deps: AppDeps, images: typeof TurnInput.static.images) {
  if (!images) return undefined;
  const policy = imageUrlPolicy(deps.config);
  const issues: ValidationIssue[] = [];
  const checked = images.map((image, i) => {
    const c = checkImageUrl(image.imageUrl, policy);
    if (!c.ok) issues.push({ path: ['images', i, 'imageUrl'], message: c.reason });
    return c.ok ? { ...image, imageUrl: c.url } : image;
  });
  if (issues.length) throw invalidInput(issues);
  return checked;
}

/**
 * The request's files, each one the caller may read and send to this conversation (`undefined`:
 * a new one), or a 400 naming each that is not, before any stream starts: unknown and not
 * readable alike (as files/getFile answers 404 for both); someone else's file outside the
 * conversation it came through, with why (docs/files.md, "Access").
 */
async function checkedFiles(deps: AppDeps, ids: string[] | undefined, userId: string, conversationId: string | undefined): Promise<FileRow[] | undefined> {
  if (!ids?.length) return undefined;
  const unique = [...new Set(ids)];
  const found = await deps.store.read(function* (tx) {
    const rows: (FileRow | 'unreadable' | 'not yours')[] = [];
    for (const id of unique) {
      const f = yield* findFileById(tx, id);
      if (!f || !(yield* canReadFile(tx, f, userId))) rows.push('unreadable');
      else rows.push((yield* canSendFile(tx, f, userId, conversationId)) ? f : 'not yours');
    }
    return rows;
  });
  const issues = unique.flatMap((id, i) => {
    const path = ['files', ids.indexOf(id)];
    if (found[i] === 'unreadable') return [{ path, message: `No file ${id} that you may read.` }];
    if (found[i] === 'not yours')
      return [{ path, message: `File ${id} is another user's: only they may send it to another conversation; you may send it again in the conversation it came through.` }];
    return [];
  });
  if (issues.length) throw invalidInput(issues);
  return found as FileRow[];
}

/**
 * The assistant that answers: the one named (400 before the stream when the caller may not use
 * it), else the one the conversation was started with while the caller may still use it.
 */
async function chosenAssistant(deps: AppDeps, user: User, assistantId: string | undefined, conversation: { assistantId: string | null } | undefined) {
  if (assistantId) {
    const a = await usableAssistant(deps, user, assistantId);
    if (!a) throw invalidInput([{ path: ['assistantId'], message: `No assistant ${assistantId} that you may use (assistants/list).` }]);
    return a;
  }
  return conversation?.assistantId ? usableAssistant(deps, user, conversation.assistantId) : undefined;
}

function streamTurn(kind: 'chat' | 'research') {
  return async ({ input, user, principal, deps, request, requestId }: OpContext<typeof TurnInput.static>) => {
    const images = checkedImages(deps, input.images);
    const lastEventId = readLastEventId(request);
    if (lastEventId) {
      const at = parseEventId(lastEventId);
      const r = at && (await canSeeResponse(deps, user, at.responseId));
      if (!at || !r) return errorOnlyStream('The stream to resume was not found.');
      return followResponse(deps, r.id, at.seq, request.signal);
    }
    let conversation;
    if (input.conversationId !== undefined) {
      const id = input.conversationId;
      conversation = await deps.store.read(function* (tx) {
        const c = yield* findConversationById(tx, id);
        return c && (yield* canWriteConversation(tx, c.id, user.id)) ? c : undefined;
      });
      if (!conversation) return errorOnlyStream('The conversation was not found or you cannot write to it.');
    }
    const files = await checkedFiles(deps, input.files, user.id, conversation?.id);
    const assistant = await chosenAssistant(deps, user, input.assistantId, conversation);
    if (!input.message.trim() && !images?.length && !files?.length) return errorOnlyStream('The message is empty.');
    const response = await startResponse(deps, {
      userId: user.id,
      kind,
      message: input.message,
      images,
      files,
      // The request's model, else the assistant's, else the server's default.
      model: input.model ?? assistant?.model ?? undefined,
      conversation,
      requestId,
      tier: user.subscriptionTier,
      ...(input.assistantId ? { assistantId: input.assistantId } : {}),
      apiKeyId: apiKeyOf(principal),
    });
    // The turn goes upstream before its stream opens: on SQLite all the turn does before its
    // request is work between awaits that resolve at once, which opening the stream (its stored
    // events read and sent) would otherwise interleave with, delaying the first token by about a
    // millisecond (bench/RESULTS.md, "Real model"). The opening events lose nothing: they are stored.
    await new Promise<void>((resolve) => setImmediate(resolve));
    return followResponse(deps, response.id, 0, request.signal);
  };
}

export const streamOperations = [
  defineOperation({
    path: 'chat/streamDeepResearch',
    summary: 'Run deep research in the background and stream its events',
    description: STREAM_DESCRIPTION,
    input: TurnInput,
    output: StreamEvent,
    kind: 'sse',
    errors: [429],
    rateLimit: 'ai',
    // A turn's images are data URLs: room for one of the largest images images/convertImage takes.
    maxBodyBytes: IMAGE_BODY_BYTES,
    handler: streamTurn('research'),
  }),
  defineOperation({
    path: 'chat/stream',
    summary: 'Send a chat message and stream the answer',
    description: `Regular chat on a new or existing conversation, with the same frames and rules as chat/streamDeepResearch. ${STREAM_DESCRIPTION}`,
    input: TurnInput,
    output: StreamEvent,
    kind: 'sse',
    errors: [429],
    rateLimit: 'ai',
    maxBodyBytes: IMAGE_BODY_BYTES,
    handler: streamTurn('chat'),
  }),
  defineOperation({
    path: 'chat/resumeStream',
    summary: "Resume a response's stream after an event",
    description:
      'Replays every stored event after `after` (a sequence number, or a whole frame id `<responseId>:<seq>`; default 0: from the start) exactly once, then the live tail until `done`/`error`. A `Last-Event-ID` header for the same response further on wins. Works after a server restart. Unknown response or no access → 404.',
    input: t.Object({ responseId: t.String(), after: t.Optional(t.Union([t.Integer({ minimum: 0 }), t.String()])) }),
    output: StreamEvent,
    kind: 'sse',
    errors: [404],
    handler: async ({ input, user, deps, request }) => {
      const r = await canSeeResponse(deps, user, input.responseId);
      if (!r) throw notFound();
      let after = 0;
      if (typeof input.after === 'number') after = input.after;
      else if (typeof input.after === 'string') {
        // A frame id counts only for this response: another response's numbers say nothing here,
        // and replaying from the start loses nothing.
        const at = parseEventId(input.after);
        after = at ? (at.responseId === r.id ? at.seq : 0) : Number.isInteger(Number(input.after)) ? Number(input.after) : 0;
      }
      // A client library reconnecting this very request adds Last-Event-ID: it wins when it is further on.
      const last = parseEventId(readLastEventId(request) ?? '');
      if (last && last.responseId === r.id) after = Math.max(after, last.seq);
      return followResponse(deps, r.id, after, request.signal);
    },
  }),
  defineOperation({
    path: 'chat/cancelResponse',
    summary: 'Cancel a running response',
    description:
      'Stops the background task (and the upstream response). Its stream ends with an `error` event saying it was cancelled; status `cancelled`. `success` is false when the response had already finished; `status` is the status after the call.',
    input: t.Object({ responseId: t.String() }),
    output: t.Object({ success: t.Boolean(), status: t.String() }),
    errors: [404],
    handler: async ({ input, user, deps }) => {
      const r = await canSeeResponse(deps, user, input.responseId);
      if (!r) throw notFound();
      if (isTerminal(r.status)) return { success: false, status: r.status };
      await cancelResponse(deps, r);
      return { success: true, status: (await deps.store.read((tx) => findResponseById(tx, r.id)))!.status };
    },
  }),
];
