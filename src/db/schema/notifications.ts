import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { users } from './users';

/**
 * An Expo push token of a device. A token belongs to one user, and to the credential that
 * registered it (a session on that device, or an API key): while that credential is live the token
 * stays with its user, and once it ended another user's registration takes it (docs/extras.md).
 * Both are null on rows registered before Parley kept them.
 */
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
    // No foreign keys: an ended session's row is pruned later, and a missing one reads as ended.
    sessionId: text('session_id'),
    apiKeyId: text('api_key_id'),
  },
  (t) => [index('push_tokens_user_idx').on(t.userId)],
);

export type PushToken = typeof pushTokens.$inferSelect;
