import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { users } from './users';

/** An Expo push token of a device. A token belongs to one user: registering it again moves it. */
export const pushTokens = sqliteTable(
  'push_tokens',
  {
    token: text('token').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    platform: text('platform', { enum: ['ios', 'android', 'web'] }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('push_tokens_user_idx').on(t.userId)],
);

export type PushToken = typeof pushTokens.$inferSelect;
