import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { forbidden, invalidInput, notFound } from '../http/errors';
import type { AppDeps } from '../deps';
import type { BookmarkGroup, BookmarkItem } from '../db/schema';
import { iso } from '../ids';
import { checkCap } from '../http/user-caps';
import { canWriteConversation, findConversationById, listItems } from '../chat/conversation.store';
import {
  addBookmarkItem,
  countBookmarkGroups,
  countBookmarks,
  createBookmarkGroup,
  deleteBookmarkGroup,
  findBookmarkGroupById,
  findBookmarkItemWithOwner,
  listBookmarkGroups,
  listBookmarkItemsOfUser,
  removeBookmarkItem,
} from './bookmark.store';

const Timestamp = t.String({ format: 'date-time' });
const GroupSchema = t.Object({ id: t.String(), name: t.String(), createdAt: Timestamp, updatedAt: Timestamp });
const ItemSchema = t.Object({
  id: t.String(),
  groupId: t.String(),
  conversationId: t.String(),
  itemId: t.Union([t.String(), t.Null()]),
  createdAt: Timestamp,
});

const groupView = (g: BookmarkGroup) => ({ id: g.id, name: g.name, createdAt: iso(g.createdAt), updatedAt: iso(g.updatedAt) });
const itemView = (i: BookmarkItem) => ({ id: i.id, groupId: i.groupId, conversationId: i.conversationId, itemId: i.itemId, createdAt: iso(i.createdAt) });

/** The caller's group: unknown → 404, someone else's → 403. */
async function ownGroup(deps: AppDeps, id: string, userId: string): Promise<BookmarkGroup> {
  const group = await deps.store.read((tx) => findBookmarkGroupById(tx, id));
  if (!group) throw notFound();
  if (group.userId !== userId) throw forbidden();
  return group;
}

export const bookmarkOperations = [
  defineOperation({
    path: 'bookmarks/createGroup',
    summary: 'Create a bookmark group',
    // Not blank: at least one character that is not white space (the name is stored trimmed).
    description: 'A caller who keeps PARLEY_BOOKMARK_GROUPS_MAX_PER_USER groups: 409.',
    input: t.Object({ name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S' }) }),
    output: GroupSchema,
    errors: [409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) =>
      groupView(
        await deps.store.write(function* (tx) {
          yield* checkCap(tx, 'bookmarkGroupsMaxPerUser', user.id, deps.config.bookmarkGroupsMaxPerUser, countBookmarkGroups(tx, user.id), (n) => [
            `You keep ${n} bookmark groups`,
            'Delete one you no longer need first (bookmarks/deleteGroup).',
          ]);
          return yield* createBookmarkGroup(tx, user.id, input.name.trim(), deps.now());
        }),
      ),
  }),
  defineOperation({
    path: 'bookmarks/listGroups',
    summary: "The caller's bookmark groups with their items, oldest group first",
    input: t.Object({}),
    output: t.Object({ groups: t.Array(t.Object({ ...GroupSchema.properties, itemCount: t.Number(), items: t.Array(ItemSchema) })) }),
    handler: async ({ user, deps }) => {
      const [items, groups] = await deps.store.read(function* (tx) {
        return [yield* listBookmarkItemsOfUser(tx, user.id), yield* listBookmarkGroups(tx, user.id)] as const;
      });
      const byGroup = Map.groupBy(items, (i) => i.groupId);
      return {
        groups: groups.map((g) => {
          const items = byGroup.get(g.id) ?? [];
          return { ...groupView(g), itemCount: items.length, items: items.map(itemView) };
        }),
      };
    },
  }),
  defineOperation({
    path: 'bookmarks/addItem',
    summary: 'Bookmark a conversation, or one item of it, into one of the caller\'s groups',
    description:
      'The group must be the caller\'s and the conversation one the caller can read (owner or writer), else 403; unknown group or conversation: 404. ' +
      '`itemId`, when given, must be an item of that conversation (else 400). Deleting the conversation (or truncating the item away) removes the bookmark. ' +
      'A caller who keeps PARLEY_BOOKMARKS_MAX_PER_USER bookmarks: 409.',
    input: t.Object({ groupId: t.String(), conversationId: t.String(), itemId: t.Optional(t.String()) }),
    output: ItemSchema,
    errors: [403, 404, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      await ownGroup(deps, input.groupId, user.id);
      return itemView(
        await deps.store.write(function* (tx) {
          if (!(yield* findConversationById(tx, input.conversationId))) throw notFound();
          if (!(yield* canWriteConversation(tx, input.conversationId, user.id))) throw forbidden();
          if (input.itemId !== undefined && !(yield* listItems(tx, input.conversationId)).some((i) => i.id === input.itemId))
            throw invalidInput([{ path: ['itemId'], message: 'not an item of this conversation' }]);
          yield* checkCap(tx, 'bookmarksMaxPerUser', user.id, deps.config.bookmarksMaxPerUser, countBookmarks(tx, user.id), (n) => [
            `You keep ${n} bookmarks`,
            'Remove some first (bookmarks/removeItem).',
          ]);
          return yield* addBookmarkItem(tx, input, deps.now());
        }),
      );
    },
  }),
  defineOperation({
    path: 'bookmarks/removeItem',
    summary: 'Remove one bookmark from one of the caller\'s groups',
    description: 'Unknown bookmark: 404; a bookmark in another user\'s group: 403.',
    input: t.Object({ id: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const item = await deps.store.read((tx) => findBookmarkItemWithOwner(tx, input.id));
      if (!item) throw notFound();
      if (item.ownerId !== user.id) throw forbidden();
      return { success: await deps.store.read((tx) => removeBookmarkItem(tx, item.id)) };
    },
  }),
  defineOperation({
    path: 'bookmarks/deleteGroup',
    summary: 'Delete one of the caller\'s bookmark groups and its items',
    description: 'The group and its items go in one transaction. Another user\'s group: 403; unknown group: 404.',
    input: t.Object({ id: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      await ownGroup(deps, input.id, user.id);
      await deps.store.write((tx) => deleteBookmarkGroup(tx, input.id));
      return { success: true };
    },
  }),
];
