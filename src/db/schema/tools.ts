import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { conversations } from './conversations';
import { responses } from './responses';

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/**
 * A call of an "ask first" tool waiting for, or given, the user's answer (docs/chat.md, "Tool
 * approval"). Made with its `tool_call.approval_required` event, in one transaction, so a restart
 * finds both or neither; the turn that resumes (after a restart, or on another instance) finds
 * the answer here even when it was given while no instance ran the turn. Keyed by the call
 * (`call_key`: upstream round and call id), so a call run again after a restart finds its row.
 * Deleted with the response.
 */
export const toolApprovals = sqliteTable(
  'tool_approvals',
  {
    id: text('id').primaryKey(),
    responseId: text('response_id')
      .notNull()
      .references(() => responses.id, { onDelete: 'cascade' }),
    /** The model's id for the call: the event's `itemId`, what `chat/approveToolCall` names. */
    itemId: text('item_id').notNull(),
    callKey: text('call_key').notNull(),
    toolName: text('tool_name').notNull(),
    source: text('source').notNull(),
    arguments: text('arguments', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    status: text('status', { enum: APPROVAL_STATUSES }).notNull(),
    /** Who decided: the user's answer, the timeout, or the turn ending first (cancelled, failed). */
    decidedBy: text('decided_by', { enum: ['user', 'timeout', 'ended'] }),
    /** The turn told its stream how it was decided (`tool_call.approval_resolved`), in the same transaction. */
    announced: integer('announced', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    decidedAt: integer('decided_at'),
  },
  (t) => [uniqueIndex('tool_approvals_call_idx').on(t.responseId, t.callKey), index('tool_approvals_item_idx').on(t.responseId, t.itemId)],
);

/**
 * "Always for this conversation": a user's standing answer for one tool in one conversation.
 * Per user, since the tools run with the data and credentials of the user whose turn it is: a
 * writer of a shared conversation answers for their own turns only.
 */
export const conversationToolRules = sqliteTable(
  'conversation_tool_rules',
  {
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    toolName: text('tool_name').notNull(),
    decision: text('decision', { enum: ['approve', 'deny'] }).notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.userId, t.toolName] })],
);

export type ToolApprovalRow = typeof toolApprovals.$inferSelect;
export type ConversationToolRule = typeof conversationToolRules.$inferSelect;
