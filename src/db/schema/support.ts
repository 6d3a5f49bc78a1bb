import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { users } from './users';

/**
 * A user's support conversation with the server's admins (docs/support.md). `lastMessageAt`
 * orders the lists (newest activity first) without reading the messages.
 */
export const supportThreads = sqliteTable(
  'support_threads',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    status: text('status', { enum: ['open', 'closed'] }).notNull().default('open'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    lastMessageAt: integer('last_message_at').notNull(),
    closedAt: integer('closed_at'),
  },
  (t) => [
    index('support_threads_user_idx').on(t.userId, t.lastMessageAt),
    index('support_threads_status_idx').on(t.status, t.lastMessageAt),
  ],
);

/**
 * One message of a support thread, by the user or by an admin (whose name and e-mail are
 * optional: the CLI may reply anonymously). Each side's read time is kept apart: a message is
 * read by its own side when written, and by the other side when that side opens the thread.
 */
export const supportMessages = sqliteTable(
  'support_messages',
  {
    id: text('id').primaryKey(),
    threadId: text('thread_id')
      .notNull()
      .references(() => supportThreads.id, { onDelete: 'cascade' }),
    author: text('author', { enum: ['user', 'admin'] }).notNull(),
    adminName: text('admin_name'),
    adminEmail: text('admin_email'),
    body: text('body').notNull(),
    createdAt: integer('created_at').notNull(),
    readByUserAt: integer('read_by_user_at'),
    readByAdminAt: integer('read_by_admin_at'),
  },
  (t) => [index('support_messages_thread_idx').on(t.threadId, t.createdAt)],
);

export type SupportThread = typeof supportThreads.$inferSelect;
export type SupportMessage = typeof supportMessages.$inferSelect;
export type SupportStatus = SupportThread['status'];
export type SupportAuthor = SupportMessage['author'];
