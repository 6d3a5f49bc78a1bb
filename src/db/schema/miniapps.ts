import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';

/**
 * A small web app an admin offers every user (`parley miniapps add`). Listed by `position`, then
 * name. `nameKey` is the name folded to lower case: names are unique regardless of case, and a
 * unique index says so on both databases (whose own lower() functions fold differently).
 */
export const miniApps = sqliteTable(
  'mini_apps',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    nameKey: text('name_key').notNull(),
    url: text('url').notNull(),
    iconUrl: text('icon_url'),
    description: text('description'),
    position: integer('position').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('mini_apps_name_key_idx').on(t.nameKey), index('mini_apps_position_idx').on(t.position, t.name)],
);

export type MiniApp = typeof miniApps.$inferSelect;
