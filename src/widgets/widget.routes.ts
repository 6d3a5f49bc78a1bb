import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, forbidden, notFound } from '../http/errors';
import type { AppDeps } from '../deps';
import type { Widget, WidgetThread } from '../db/schema';
import { canWriteConversation } from '../chat/conversation.store';
import { findWidgetById } from './widget.store';
import { addThreadMessage, archiveThread, findThreadById, getOrCreateActiveThread, listThreadMessages } from './widget-thread.store';
import { ThreadMessageSchema, ThreadSchema, WidgetSchema, threadMessageView, threadView, widgetView } from './widget.view';

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
    summary: "The caller's active thread for a widget, created when there is none",
    description:
      '`created` is true when this call made the thread. Concurrent calls return the same thread. Messages are in the order they were added. ' +
      'Unknown widget: 404; a widget in a conversation the caller cannot read: 403.',
    input: t.Object({ widgetId: t.String() }),
    output: t.Object({ thread: ThreadSchema, created: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const widget = await readableWidget(deps, input.widgetId, user.id);
      return deps.store.read(function* (tx) {
        const { thread, created } = yield* getOrCreateActiveThread(tx, widget.id, user.id, deps.now());
        return { thread: threadView(thread, created ? [] : yield* listThreadMessages(tx, thread.id)), created };
      });
    },
  }),
  defineOperation({
    path: 'widget/addThreadMessage',
    summary: "Append a message to one of the caller's widget threads",
    description:
      '`data` is any JSON object, stored as given. Only the thread\'s owner may add, and only while they can still read the widget\'s conversation (else 403); unknown thread: 404; an archived thread: 409.',
    input: t.Object({ threadId: t.String(), data: t.Record(t.String(), t.Unknown()) }),
    output: ThreadMessageSchema,
    errors: [403, 404, 409],
    // `data` is free-form and stored as given: room for a long message, not for files.
    maxBodyBytes: 1024 * 1024,
    handler: async ({ input, user, deps }) => {
      const thread = await ownThread(deps, input.threadId, user.id);
      if (thread.status !== 'active') throw new AppError('CONFLICT', { message: 'The thread is archived' });
      return threadMessageView(await deps.store.write((tx) => addThreadMessage(tx, thread.id, input.data, deps.now())));
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
];

/** The caller's thread on a widget they can still read: unknown → 404, someone else's or unreadable → 403. */
async function ownThread(deps: AppDeps, threadId: string, userId: string): Promise<WidgetThread> {
  const thread = await deps.store.read((tx) => findThreadById(tx, threadId));
  if (!thread) throw notFound();
  if (thread.userId !== userId) throw forbidden();
  await readableWidget(deps, thread.widgetId, userId);
  return thread;
}
