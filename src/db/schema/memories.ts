import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users';

/**
 * Facts the assistant keeps about one user across conversations (docs/memory.md). They go with
 * the account: the cascade removes them when the user row is deleted.
 * `origin` names the tool call that saved one (response, upstream round, call id): a call run
 * again after a restart finds its memory instead of saving a second one. Null when the user
 * added it through the API.
 */
export const memories = sqliteTable(
  'memories',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    content: text('content').notNull(),
    origin: text('origin'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('memories_user_idx').on(t.userId, t.updatedAt), uniqueIndex('memories_origin_idx').on(t.origin)],
);

export type Memory = typeof memories.$inferSelect;
