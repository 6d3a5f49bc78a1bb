import { asc, eq, inArray } from 'drizzle-orm';
import type { BookmarkGroup, BookmarkItem } from '../db/schema';
import { allRows, countRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

export function* createBookmarkGroup({ db, t }: Tx, userId: string, name: string, now: number): Work<BookmarkGroup> {
  return (yield* getRow(db.insert(t.bookmarkGroups).values({ id: newId(), userId, name, createdAt: now, updatedAt: now }).returning()))!;
}

/** A user's bookmark groups (their cap: PARLEY_BOOKMARK_GROUPS_MAX_PER_USER). */
export const countBookmarkGroups = (tx: Tx, userId: string) => countRows(tx, tx.t.bookmarkGroups, eq(tx.t.bookmarkGroups.userId, userId));

/** A user's bookmarks in all their groups (their cap: PARLEY_BOOKMARKS_MAX_PER_USER). */
export function countBookmarks(tx: Tx, userId: string): Work<number> {
  const { db, t } = tx;
  return countRows(tx, t.bookmarkItems, inArray(t.bookmarkItems.groupId, db.select({ id: t.bookmarkGroups.id }).from(t.bookmarkGroups).where(eq(t.bookmarkGroups.userId, userId))));
}

export function* findBookmarkGroupById({ db, t }: Tx, id: string): Work<BookmarkGroup | undefined> {
  return yield* getRow(db.select().from(t.bookmarkGroups).where(eq(t.bookmarkGroups.id, id)));
}

export function* listBookmarkGroups({ db, t }: Tx, userId: string): Work<BookmarkGroup[]> {
  return yield* allRows(db.select().from(t.bookmarkGroups).where(eq(t.bookmarkGroups.userId, userId)).orderBy(asc(t.bookmarkGroups.createdAt), asc(t.bookmarkGroups.id)));
}

/** Every bookmark of one user, oldest first (one query for the whole list view). */
export function* listBookmarkItemsOfUser({ db, t }: Tx, userId: string): Work<BookmarkItem[]> {
  const rows = yield* allRows(
    db
      .select({ item: t.bookmarkItems })
      .from(t.bookmarkItems)
      .innerJoin(t.bookmarkGroups, eq(t.bookmarkGroups.id, t.bookmarkItems.groupId))
      .where(eq(t.bookmarkGroups.userId, userId))
      .orderBy(asc(t.bookmarkItems.createdAt), asc(t.bookmarkItems.id)),
  );
  return rows.map((r) => r.item);
}

/** The item and its group's updated time, in one transaction (run with `store.write`). */
export function* addBookmarkItem({ db, t }: Tx, input: { groupId: string; conversationId: string; itemId?: string | null }, now: number): Work<BookmarkItem> {
  const row = yield* getRow(
    db.insert(t.bookmarkItems).values({ id: newId(), groupId: input.groupId, conversationId: input.conversationId, itemId: input.itemId ?? null, createdAt: now }).returning(),
  );
  yield* exec(db.update(t.bookmarkGroups).set({ updatedAt: now }).where(eq(t.bookmarkGroups.id, input.groupId)));
  return row!;
}

/** The item with the id of its group's owner, for authorisation. */
export function* findBookmarkItemWithOwner({ db, t }: Tx, id: string): Work<(BookmarkItem & { ownerId: string }) | undefined> {
  const r = yield* getRow(
    db
      .select({ item: t.bookmarkItems, ownerId: t.bookmarkGroups.userId })
      .from(t.bookmarkItems)
      .innerJoin(t.bookmarkGroups, eq(t.bookmarkGroups.id, t.bookmarkItems.groupId))
      .where(eq(t.bookmarkItems.id, id)),
  );
  return r && { ...r.item, ownerId: r.ownerId };
}

export function* removeBookmarkItem({ db, t }: Tx, id: string): Work<boolean> {
  return (yield* allRows(db.delete(t.bookmarkItems).where(eq(t.bookmarkItems.id, id)).returning({ id: t.bookmarkItems.id }))).length > 0;
}

/**
 * A group and its items (run with `store.write`: one transaction). The items would go by cascade
 * too; deleting them explicitly keeps the guarantee on a connection without `foreign_keys = ON`.
 */
export function* deleteBookmarkGroup({ db, t }: Tx, id: string): Work<{ deletedItems: number }> {
  const deletedItems = (yield* allRows(db.delete(t.bookmarkItems).where(eq(t.bookmarkItems.groupId, id)).returning({ id: t.bookmarkItems.id }))).length;
  yield* exec(db.delete(t.bookmarkGroups).where(eq(t.bookmarkGroups.id, id)));
  return { deletedItems };
}
