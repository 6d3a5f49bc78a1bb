import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, forbidden, invalidInput, notFound } from '../http/errors';
import type { AppDeps } from '../deps';
import type { Widget, WidgetThread } from '../db/schema';
import { canWriteConversation } from '../chat/conversation.store';
import { findWidgetById } from './widget.store';
import type { Config } from '../config';
import { capReached } from '../http/user-caps';
import {
  addThreadMessage,
  archiveThread,
  deleteThread,
  findActiveThread,
  findMessageSeq,
  findThreadById,
  getOrCreateActiveThread,
  listThreadPage,
  type ThreadCaps,
} from './widget-thread.store';
import { ThreadMessageSchema, ThreadSchema, WidgetSchema, threadMessageView, threadView, widgetView } from './widget.view';

/** A page of a thread: the schema documents the default the handlers apply. */
const PAGE = { minimum: 1, maximum: 100, default: 50 };
/**
 * A page holds at most this much of messages' JSON (one message at least, whatever its size): a
 * read costs the page, never the whole thread (a 60 MB thread once took a read to 341 MB RSS).
 */
const PAGE_BYTES = 1024 * 1024;
const NextBefore = t.Union([t.String(), t.Null()], { description: 'The `before` of the previous page (older messages); null when this page reaches the first message.' });

const nextBeforeOf = (page: { messages: { id: string }[]; more: boolean }) => (page.more ? page.messages[0]!.id : null);
const archived = () => new AppError('CONFLICT', { message: 'The thread is archived' });

const threadCapsOf = (config: Config): ThreadCaps => ({
  threadMaxMessages: config.widgetThreadMaxMessages,
  threadMaxBytes: config.widgetThreadMaxBytes,
  userMaxMessages: config.widgetUserMaxMessages,
  userMaxBytes: config.widgetUserMaxBytes,
  userMaxThreads: config.widgetThreadsMaxPerUser,
});

/**
 * A widget is readable by whoever can read its conversation: the owner and its writers (a
 * conversation has no read-only members). Unknown → 404, not readable → 403.
 */
async function readableWidget(deps: AppDeps, widgetId: string, userId: string): Promise<Widget> {
  return deps.store.read(function* (tx) {
    const widget = yield* findWidgetById(tx, widgetId);
    if (!widget) throw notFound();
    if (!(yield* canWriteConversation(tx, widget.conversationId, userId))) throw forbidden();
    return widget;
  });
}

export const widgetOperations = [
  defineOperation({
    path: 'widget/get',
    summary: 'A widget an AI response made (e.g. a canvas document)',
    description: 'Readable by the owner and the writers of the widget\'s conversation; others get 403, unknown widgets 404.',
    input: t.Object({ widgetId: t.String() }),
    output: WidgetSchema,
    errors: [403, 404],
    handler: async ({ input, user, deps }) => widgetView(await readableWidget(deps, input.widgetId, user.id)),
  }),
  defineOperation({
    path: 'widget/getOrCreateThread',
    summary: "The caller's active thread for a widget, created when there is none, with its latest messages",
    description:
      '`created` is true when this call made the thread. Concurrent calls return the same thread. `thread.messages` are the newest ' +
      `${PAGE.default} (fewer when they hold over ${PAGE_BYTES / 1024 / 1024} MiB), oldest first; \`nextBefore\` is the cursor for the ones before them (widget/listThreadMessages), null when there are none. ` +
      'A caller who keeps PARLEY_WIDGET_THREADS_MAX_PER_USER threads gets 409 instead of a new one. Unknown widget: 404; a widget in a conversation the caller cannot read: 403.',
    input: t.Object({ widgetId: t.String() }),
    output: t.Object({ thread: ThreadSchema, created: t.Boolean(), nextBefore: NextBefore }),
    errors: [403, 404, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const widget = await readableWidget(deps, input.widgetId, user.id);
      const found = await deps.store.read((tx) => findActiveThread(tx, widget.id, user.id));
      const { thread, created } = found
        ? { thread: found, created: false }
        : await deps.store.write((tx) => getOrCreateActiveThread(tx, widget.id, user.id, deps.now(), deps.config.widgetThreadsMaxPerUser));
      const page = created ? { messages: [], more: false } : await deps.store.read((tx) => listThreadPage(tx, thread.id, { limit: PAGE.default, maxBytes: PAGE_BYTES }));
      return { thread: threadView(thread, page.messages), created, nextBefore: nextBeforeOf(page) };
    },
  }),
  defineOperation({
    path: 'widget/listThreadMessages',
    summary: "A page of one of the caller's widget threads, oldest first",
    description:
      `The newest \`limit\` messages (default ${PAGE.default}) before the message \`before\` names (none: the newest of the thread), fewer when they hold over ${PAGE_BYTES / 1024 / 1024} MiB; ` +
      '`nextBefore` fetches the ones before them, null when there are none. Archived threads too. `before` that is not a message of the thread: 400. Only the thread\'s owner, while they can read the widget (else 403); unknown thread: 404.',
    input: t.Object({
      threadId: t.String(),
      before: t.Optional(t.String({ description: 'A `nextBefore` this operation or widget/getOrCreateThread gave out; empty or absent: the newest messages.' })),
      limit: t.Optional(t.Integer(PAGE)),
    }),
    output: t.Object({ messages: t.Array(ThreadMessageSchema), nextBefore: NextBefore }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const thread = await ownThread(deps, input.threadId, user.id);
      const page = await deps.store.read(function* (tx) {
        const beforeSeq = input.before ? yield* findMessageSeq(tx, thread.id, input.before) : undefined;
        if (input.before && beforeSeq === undefined) throw invalidInput([{ path: ['before'], message: 'Not a message of this thread' }]);
        return yield* listThreadPage(tx, thread.id, { limit: input.limit ?? PAGE.default, maxBytes: PAGE_BYTES, beforeSeq });
      });
      return { messages: page.messages.map(threadMessageView), nextBefore: nextBeforeOf(page) };
    },
  }),
  defineOperation({
    path: 'widget/addThreadMessage',
    summary: "Append a message to one of the caller's widget threads",
    description:
      '`data` is any JSON object, stored as given, of at most PARLEY_WIDGET_MESSAGE_MAX_BYTES bytes of JSON (else 413). Only the thread\'s owner may add, and only while they can still read the widget\'s conversation (else 403); unknown thread: 404; ' +
      'an archived thread, or a thread or user past its cap (PARLEY_WIDGET_THREAD_MAX_MESSAGES, PARLEY_WIDGET_THREAD_MAX_BYTES, PARLEY_WIDGET_USER_MAX_MESSAGES, PARLEY_WIDGET_USER_MAX_BYTES): 409, `data.cap` naming the cap.',
    input: t.Object({ threadId: t.String(), data: t.Record(t.String(), t.Unknown()) }),
    output: ThreadMessageSchema,
    errors: [403, 404, 409],
    rateLimit: 'write',
    // Room for the largest message and the rest of the input.
    maxBodyBytes: (config) => config.widgetMessageMaxBytes + 4096,
    bodyCap: 'widgetMessageMaxBytes',
    handler: async ({ input, user, deps }) => {
      const thread = await ownThread(deps, input.threadId, user.id);
      if (thread.status !== 'active') throw archived();
      const bytes = Buffer.byteLength(JSON.stringify(input.data));
      const max = deps.config.widgetMessageMaxBytes;
      if (bytes > max) throw capReached('widgetMessageMaxBytes', max, `This message has ${bytes} bytes of JSON`, 'Send a shorter one.', 'PAYLOAD_TOO_LARGE');
      const added = await deps.store.write((tx) => addThreadMessage(tx, thread, input.data, bytes, threadCapsOf(deps.config), deps.now()));
      if (!added) throw archived();
      return threadMessageView(added);
    },
  }),
  defineOperation({
    path: 'widget/archiveThread',
    summary: "Archive one of the caller's widget threads, so the next getOrCreateThread starts a new one",
    description: 'The archived thread keeps its messages. Archiving twice succeeds. Only the owner may archive (403); unknown thread: 404.',
    input: t.Object({ threadId: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const thread = await ownThread(deps, input.threadId, user.id);
      await deps.store.read((tx) => archiveThread(tx, thread.id, deps.now()));
      return { success: true };
    },
  }),
  defineOperation({
    path: 'widget/deleteThread',
    summary: "Delete one of the caller's widget threads and its messages",
    description:
      'Frees room under the caps on widget threads (PARLEY_WIDGET_THREADS_MAX_PER_USER, PARLEY_WIDGET_USER_MAX_MESSAGES, PARLEY_WIDGET_USER_MAX_BYTES). The owner may delete a thread even once they can no longer read its widget. Another user\'s thread: 403; unknown thread: 404.',
    input: t.Object({ threadId: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const thread = await deps.store.read((tx) => findThreadById(tx, input.threadId));
      if (!thread) throw notFound();
      if (thread.userId !== user.id) throw forbidden();
      if (!(await deps.store.write((tx) => deleteThread(tx, thread.id)))) throw notFound();
      return { success: true };
    },
  }),
];

/** The caller's thread on a widget they can still read: unknown → 404, someone else's or unreadable → 403. */
async function ownThread(deps: AppDeps, threadId: string, userId: string): Promise<WidgetThread> {
  const thread = await deps.store.read((tx) => findThreadById(tx, threadId));
  if (!thread) throw notFound();
  if (thread.userId !== userId) throw forbidden();
  await readableWidget(deps, thread.widgetId, userId);
  return thread;
}
