import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { conversations } from './conversations';

/**
 * A widget an AI response made (e.g. a canvas document), announced by the `widget.created` event.
 * `responseId` is kept as plain text so a widget outlives the pruning of its response's events.
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
  },
  (t) => [index('widgets_conversation_idx').on(t.conversationId)],
);

export type Widget = typeof widgets.$inferSelect;
