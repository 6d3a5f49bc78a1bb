import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';
import { users } from './users';

/**
 * An announcement an admin posted (`parley news post`). Ids are UUIDv7, so their order is the
 * order of posting: lists sort and page by id alone.
 */
export const newsPosts = sqliteTable('news_posts', {
  id: text('id').primaryKey(),
  title: text('title').notNull(),
  /** Markdown, rendered by the client. */
  body: text('body').notNull(),
  createdAt: integer('created_at').notNull(),
});

/**
 * Which posts a user has marked read. A row exists only once marked; a post older than the
 * user's account reads as read without one (docs/service-pages.md), so a new account starts
 * with no backlog and no rows are written for it.
 */
export const newsReads = sqliteTable(
  'news_reads',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    postId: text('post_id')
      .notNull()
      .references(() => newsPosts.id, { onDelete: 'cascade' }),
    readAt: integer('read_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.postId] }), index('news_reads_post_idx').on(t.postId)],
);

export type NewsPost = typeof newsPosts.$inferSelect;
