import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { conversations } from './conversations';

export const API_RESPONSE_STATUSES = ['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete'] as const;
export type ApiResponseStatus = (typeof API_RESPONSE_STATUSES)[number];

/**
 * A response of the `/v1` door's Responses API (docs/openai-api.md, "What is stored"): one made
 * with `background: true` (its events below, so its stream can be resumed), or with `store: true`
 * (then `conversationId` is the conversation it was kept in). `body` is the response object as
 * OpenAI's API shapes it, as it last stood; the final one once it ended. Rows not in a
 * conversation go `PARLEY_V1_RESPONSE_RETENTION_HOURS` after they end.
 */
export const apiResponses = sqliteTable(
  'api_responses',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    conversationId: text('conversation_id').references(() => conversations.id, { onDelete: 'set null' }),
    status: text('status', { enum: API_RESPONSE_STATUSES }).notNull(),
    background: integer('background', { mode: 'boolean' }).notNull(),
    /** The catalogue id of the model that answers. */
    model: text('model').notNull(),
    body: text('body', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** Sequence number of the last persisted event (an event's `sequence_number` is its `seq` less one). */
    lastSeq: integer('last_seq').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  (t) => [index('api_responses_status_idx').on(t.status), index('api_responses_finished_idx').on(t.finishedAt)],
);

/** A background response's events in order, as sent (OpenAI's streaming events), for `starting_after`. */
export const apiResponseEvents = sqliteTable(
  'api_response_events',
  {
    responseId: text('response_id')
      .notNull()
      .references(() => apiResponses.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: text('data').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.responseId, t.seq] })],
);

export type ApiResponseRow = typeof apiResponses.$inferSelect;
