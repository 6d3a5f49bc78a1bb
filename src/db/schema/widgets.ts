import { sql } from 'drizzle-orm';
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { conversations } from './conversations';
import { users } from './users';

/**
 * A widget an AI response made (e.g. a canvas document), announced by the `widget.created` event.
 * `responseId` is kept as plain text so a widget outlives the pruning of its response's events.
 * `origin` names the tool call that made it (response, upstream round, call id): a call run again
 * after a restart finds its widget instead of making a second one.
 */
export const widgets = sqliteTable(
  'widgets',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    responseId: text('response_id').notNull(),
    widgetType: text('widget_type').notNull(),
    title: text('title').notNull().default(''),
    /** The widget's document (for a canvas: {topic, goal, content}). */
    document: text('document', { mode: 'json' }).$type<Record<string, unknown>>().notNull().default({}),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    origin: text('origin'),
  },
  (t) => [index('widgets_conversation_idx').on(t.conversationId), uniqueIndex('widgets_origin_idx').on(t.origin)],
);

export type Widget = typeof widgets.$inferSelect;

/**
 * A user's conversation thread about one widget. At most one `active` thread per (widget, user):
 * the partial unique index makes concurrent getOrCreateThread calls converge on one row.
 * `archived` is the only other status (widget/archiveThread; see docs/extras.md).
 */
export const widgetThreads = sqliteTable(
  'widget_threads',
  {
    id: text('id').primaryKey(),
    widgetId: text('widget_id')
      .notNull()
      .references(() => widgets.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    status: text('status', { enum: ['active', 'archived'] }).notNull().default('active'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /**
     * How many messages the thread holds and their bytes (each message's `bytes`), kept with each
     * append so the caps (PARLEY_WIDGET_THREAD_MAX_*, PARLEY_WIDGET_USER_MAX_*) read the user's
     * threads' rows, not their messages.
     */
    messageCount: integer('message_count').notNull().default(0),
    bytes: integer('bytes').notNull().default(0),
  },
  (t) => [
    uniqueIndex('widget_threads_active_idx').on(t.widgetId, t.userId).where(sql`${t.status} = 'active'`),
    index('widget_threads_user_idx').on(t.userId),
  ],
);

/** The messages of a widget thread; `seq` orders them (ids are time-sortable too, but ties need a tiebreak). */
export const widgetThreadMessages = sqliteTable(
  'widget_thread_messages',
  {
    id: text('id').primaryKey(),
    threadId: text('thread_id')
      .notNull()
      .references(() => widgetThreads.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** The bytes of `data`'s JSON: a page of messages is bounded by these before any `data` is read. */
    bytes: integer('bytes').notNull().default(0),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('widget_thread_messages_seq_idx').on(t.threadId, t.seq)],
);

export type WidgetThread = typeof widgetThreads.$inferSelect;
export type WidgetThreadMessage = typeof widgetThreadMessages.$inferSelect;
