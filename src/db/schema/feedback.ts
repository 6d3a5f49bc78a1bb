import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { conversationItems } from './conversations';

export const FEEDBACK_RATINGS = ['up', 'down'] as const;

/**
 * The reasons a rating may carry (docs/feedback.md). Any of them goes with either rating: a
 * well-written answer can still be inaccurate. Stored in this order, whatever order they came in.
 */
export const FEEDBACK_REASONS = ['accurate', 'helpful', 'well_written', 'inaccurate', 'incomplete', 'unhelpful', 'off_topic', 'too_long', 'too_short', 'harmful'] as const;
export type FeedbackReason = (typeof FEEDBACK_REASONS)[number];

/**
 * A user's thumbs up or down on one assistant answer (a conversation item: a chat or research
 * answer, or a group chat's assistant message). One per user and answer. The cascades remove it
 * with its answer (a truncation, the conversation, the group) and with its user: nothing is kept
 * once the rated text is gone (docs/feedback.md, "Lifecycle").
 */
export const answerFeedback = sqliteTable(
  'answer_feedback',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    itemId: text('item_id')
      .notNull()
      .references(() => conversationItems.id, { onDelete: 'cascade' }),
    rating: text('rating', { enum: FEEDBACK_RATINGS }).notNull(),
    reasons: text('reasons', { mode: 'json' }).$type<FeedbackReason[]>().notNull().default([]),
    /** Null when none was given (a blank comment is stored as none). */
    comment: text('comment'),
    createdAt: integer('created_at').notNull(),
    /** The last set: the export's order and its `--since`. */
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('answer_feedback_user_item_idx').on(t.userId, t.itemId),
    index('answer_feedback_item_idx').on(t.itemId),
    index('answer_feedback_updated_idx').on(t.updatedAt, t.id),
  ],
);

export type AnswerFeedback = typeof answerFeedback.$inferSelect;
