import { uniqueIndex, sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { conversationItems, conversations } from './conversations';
import { assistants } from './assistants';

/**
 * A group chat. Its messages are the items of `conversationId` (so the chat operations see the
 * group's history); `lastSeq` numbers the group's realtime events and only ever grows, so event
 * ids stay monotonic even after retention has pruned every stored event.
 */
export const groupChats = sqliteTable(
  'group_chats',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    creatorId: text('creator_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    intelligentResponses: integer('intelligent_responses', { mode: 'boolean' }).notNull().default(true),
    /** The catalogue id (`<connection>/<model>`) that answers `@ai` here; null: the admin's group default. */
    model: text('model'),
    /**
     * The shared assistant that answers `@ai` here (docs/groups.md, "The group's assistant"); null:
     * Parley's own. Deleted, the group goes back to Parley's own.
     */
    assistantId: text('assistant_id').references(() => assistants.id, { onDelete: 'set null' }),
    lastSeq: integer('last_seq').notNull().default(0),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  // One group per conversation; chat operations look a conversation's group up by it.
  (t) => [index('group_chats_creator_idx').on(t.creatorId), uniqueIndex('group_chats_conversation_idx').on(t.conversationId)],
);

export const groupMembers = sqliteTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groupChats.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    joinedAt: integer('joined_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index('group_members_user_idx').on(t.userId)],
);

/** Invite codes are bearer secrets: only their SHA-256 is stored, like API keys. */
export const groupInvites = sqliteTable(
  'group_invites',
  {
    codeHash: text('code_hash').primaryKey(),
    groupId: text('group_id')
      .notNull()
      .references(() => groupChats.id, { onDelete: 'cascade' }),
    createdBy: text('created_by')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('group_invites_group_idx').on(t.groupId)],
);

/** The durable realtime events of a group, replayed to a subscriber that resumes with Last-Event-ID. */
export const groupEvents = sqliteTable(
  'group_events',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groupChats.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    type: text('type').notNull(),
    /** The frame's whole `data` object, serialised once. */
    data: text('data').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.seq] }), index('group_events_created_idx').on(t.createdAt)],
);

/**
 * Which assistant wrote a group answer, as it was named then: the message keeps saying who answered
 * after the assistant is renamed or deleted. An answer by Parley's own has no row.
 */
export const groupAnswerAuthors = sqliteTable('group_answer_authors', {
  itemId: text('item_id')
    .primaryKey()
    .references(() => conversationItems.id, { onDelete: 'cascade' }),
  /** No reference: the assistant may be deleted, the answer stays its. */
  assistantId: text('assistant_id').notNull(),
  name: text('name').notNull(),
});

export type GroupChat = typeof groupChats.$inferSelect;
export type GroupMember = typeof groupMembers.$inferSelect;
