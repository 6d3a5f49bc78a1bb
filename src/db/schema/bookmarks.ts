import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { conversations, conversationItems } from './conversations';

export const bookmarkGroups = sqliteTable(
  'bookmark_groups',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('bookmark_groups_user_idx').on(t.userId, t.createdAt)],
);

/**
 * A bookmark: a conversation, optionally one item of it. The cascades make deleting the
 * conversation (or truncating the item away) remove the bookmark, as the interface requires.
 */
export const bookmarkItems = sqliteTable(
  'bookmark_items',
  {
    id: text('id').primaryKey(),
    groupId: text('group_id')
      .notNull()
      .references(() => bookmarkGroups.id, { onDelete: 'cascade' }),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    itemId: text('item_id').references(() => conversationItems.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('bookmark_items_group_idx').on(t.groupId, t.createdAt),
    index('bookmark_items_conversation_idx').on(t.conversationId),
    index('bookmark_items_item_idx').on(t.itemId),
  ],
);

export type BookmarkGroup = typeof bookmarkGroups.$inferSelect;
export type BookmarkItem = typeof bookmarkItems.$inferSelect;
