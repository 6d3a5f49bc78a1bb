import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { assistants } from './assistants';

export const conversations = sqliteTable(
  'conversations',
  {
    id: text('id').primaryKey(),
    ownerId: text('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    title: text('title').notNull().default(''),
    studyMode: integer('study_mode', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /**
     * The position the next item takes: one past the last item's. Kept here because Bun's SQLite
     * spends ~2 µs on any statement with an aggregate or ORDER BY, and `max(position)` ran for
     * every message (bench/RESULTS.md, change 24).
     */
    nextPosition: integer('next_position').notNull().default(0),
    /**
     * For a conversation brought in by chat/importConversation: the bytes it counts against the
     * owner's PARLEY_IMPORT_QUOTA_BYTES (src/chat/import.store.ts), set once at import. Null for
     * every other conversation, so the imports a user keeps are counted and summed from here.
     */
    importedBytes: integer('imported_bytes'),
    /** The assistant the conversation was started with (docs/assistants.md); its turns use it. Null: Parley itself. */
    assistantId: text('assistant_id').references(() => assistants.id, { onDelete: 'set null' }),
  },
  (t) => [index('conversations_owner_idx').on(t.ownerId, t.updatedAt)],
);

/** The ordered contents of a conversation. `position` orders items; it never repeats within one. */
export const conversationItems = sqliteTable(
  'conversation_items',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    role: text('role', { enum: ['user', 'assistant', 'tool', 'system'] }).notNull(),
    content: text('content').notNull().default(''),
    /** JSON array of parts (tool calls, images, citations), as the client sees them. */
    parts: text('parts', { mode: 'json' }).$type<unknown[]>().notNull().default([]),
    /** Who wrote a user item (group chats have several writers); null for AI items. */
    authorId: text('author_id').references(() => users.id, { onDelete: 'set null' }),
    createdAt: integer('created_at').notNull(),
    /**
     * In the full-text index that `search_history` reads (src/chat/history.store.ts): false for the
     * items of a group chat's conversation, which are not anyone's own history. Set once, when the
     * item is appended; the index's triggers follow it (migrations/0011).
     */
    searchable: integer('searchable', { mode: 'boolean' }).notNull().default(true),
  },
  (t) => [uniqueIndex('conversation_items_position_idx').on(t.conversationId, t.position)],
);

/** Users other than the owner who may write to a conversation (shared chats, group members). */
export const conversationWriters = sqliteTable(
  'conversation_writers',
  {
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.userId] }), index('conversation_writers_user_idx').on(t.userId)],
);

export type Conversation = typeof conversations.$inferSelect;
export type ConversationItem = typeof conversationItems.$inferSelect;

/**
 * A conversation forked from another at an item (`chat/branchConversation`). The row belongs to
 * the branch; deleting either conversation removes it, the other conversation stays.
 */
export const conversationBranches = sqliteTable(
  'conversation_branches',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    parentConversationId: text('parent_conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    parentItemId: text('parent_item_id').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('conversation_branches_conversation_idx').on(t.conversationId), index('conversation_branches_parent_idx').on(t.parentConversationId)],
);

export type ConversationBranch = typeof conversationBranches.$inferSelect;

/**
 * A conversation its owner offered to someone by e-mail (`chat/shareConversation`), waiting for
 * them to accept (then they become a writer and the row goes) or decline (`declined`: kept, so
 * the owner's list does not tell a decline from no answer and the same offer does not come back).
 * `recipientId` is the account that had the address when it was offered, or null when none did:
 * the row is written all the same, so whether an address has an account changes neither the
 * answer nor the owner's count of offers (PARLEY_SHARES_MAX_PENDING_PER_USER).
 */
export const conversationShares = sqliteTable(
  'conversation_shares',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    sharerId: text('sharer_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The address as offered, normalised as users' addresses are. */
    email: text('email').notNull(),
    recipientId: text('recipient_id').references(() => users.id, { onDelete: 'set null' }),
    status: text('status', { enum: ['pending', 'declined'] }).notNull().default('pending'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('conversation_shares_offer_idx').on(t.conversationId, t.email),
    index('conversation_shares_recipient_idx').on(t.recipientId, t.status),
    index('conversation_shares_sharer_idx').on(t.sharerId, t.createdAt),
  ],
);

export type ConversationShare = typeof conversationShares.$inferSelect;
