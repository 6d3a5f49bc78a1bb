import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { conversations } from './conversations';

export const RESPONSE_STATUSES = ['queued', 'in_progress', 'completed', 'failed', 'cancelled'] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

/**
 * One AI turn (chat or deep research). The row is also the background task: the runner
 * (src/tasks/) picks up `in_progress` rows at start-up. `upstreamId`/`upstreamSeq` say where an
 * OpenAI background response stands so it can be resumed with `starting_after`.
 */
export const responses = sqliteTable(
  'responses',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['chat', 'research'] }).notNull(),
    status: text('status', { enum: RESPONSE_STATUSES }).notNull(),
    model: text('model').notNull().default(''),
    /** What the turn was asked: {message, images} (kept to restart it). */
    input: text('input', { mode: 'json' }).$type<{ message: string; images?: { imageUrl: string; detail?: 'auto' | 'high' | 'low' }[] }>().notNull(),
    upstreamId: text('upstream_id'),
    upstreamSeq: integer('upstream_seq'),
    error: text('error'),
    /** Sequence number of the last persisted event. */
    lastSeq: integer('last_seq').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  // (conversation, created, id): a conversation's turns in order, so its latest is one index step
  // (chat/listConversations' lastResponse), not a sort of all its turns.
  (t) => [index('responses_conversation_idx').on(t.conversationId, t.createdAt, t.id), index('responses_status_idx').on(t.status), index('responses_finished_idx').on(t.finishedAt)],
);

/**
 * Every event a response emitted, in order, kept for replay (`Last-Event-ID`) until pruned.
 * The migration makes it `WITHOUT ROWID` (drizzle cannot say so): rows live in the primary-key
 * tree only, which makes the hot insert path of streaming about 40% cheaper. Keep that when
 * regenerating migrations.
 */
export const responseEvents = sqliteTable(
  'response_events',
  {
    responseId: text('response_id')
      .notNull()
      .references(() => responses.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    /** The event's JSON, serialised once and sent verbatim as the frame's data. */
    data: text('data').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.responseId, t.seq] })],
);

/**
 * What each function tool a response ran returned, written in the same transaction as the
 * tool's events. A response resumed after a restart replays its upstream from the start; a tool
 * round it finds there reuses these outputs instead of running the tools again (a second canvas,
 * a repeated search). Keyed by the upstream response that asked (one per tool round) as well as
 * the call id, which a compatible server may repeat from round to round. Deleted when the response
 * finishes (`setResponseStatus`).
 */
export const responseToolOutputs = sqliteTable(
  'response_tool_outputs',
  {
    responseId: text('response_id')
      .notNull()
      .references(() => responses.id, { onDelete: 'cascade' }),
    upstreamId: text('upstream_id').notNull(),
    callId: text('call_id').notNull(),
    output: text('output').notNull(),
  },
  (t) => [primaryKey({ columns: [t.responseId, t.upstreamId, t.callId] })],
);

export type ResponseRow = typeof responses.$inferSelect;
