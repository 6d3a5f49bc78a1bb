import { asc, eq } from 'drizzle-orm';
import { writeTx, type Db } from '../db/connection';
import { bookmarkGroups, bookmarkItems, type BookmarkGroup, type BookmarkItem } from '../db/schema';
import { newId } from '../ids';

export function createBookmarkGroup(db: Db, userId: string, name: string, now = Date.now()): BookmarkGroup {
  return db.insert(bookmarkGroups).values({ id: newId(), userId, name, createdAt: now, updatedAt: now }).returning().get();
}

export const findBookmarkGroupById = (db: Db, id: string): BookmarkGroup | undefined =>
  db.select().from(bookmarkGroups).where(eq(bookmarkGroups.id, id)).get();

export const listBookmarkGroups = (db: Db, userId: string): BookmarkGroup[] =>
  db.select().from(bookmarkGroups).where(eq(bookmarkGroups.userId, userId)).orderBy(asc(bookmarkGroups.createdAt), asc(bookmarkGroups.id)).all();

/** Every bookmark of one user, oldest first (one query for the whole list view). */
export const listBookmarkItemsOfUser = (db: Db, userId: string): BookmarkItem[] =>
  db
    .select({ item: bookmarkItems })
    .from(bookmarkItems)
    .innerJoin(bookmarkGroups, eq(bookmarkGroups.id, bookmarkItems.groupId))
    .where(eq(bookmarkGroups.userId, userId))
    .orderBy(asc(bookmarkItems.createdAt), asc(bookmarkItems.id))
    .all()
    .map((r) => r.item);

export function addBookmarkItem(
  db: Db,
  input: { groupId: string; conversationId: string; itemId?: string | null },
  now = Date.now(),
): BookmarkItem {
  return writeTx(db, (tx) => {
    const row = tx
      .insert(bookmarkItems)
      .values({ id: newId(), groupId: input.groupId, conversationId: input.conversationId, itemId: input.itemId ?? null, createdAt: now })
      .returning()
      .get();
    tx.update(bookmarkGroups).set({ updatedAt: now }).where(eq(bookmarkGroups.id, input.groupId)).run();
    return row;
  });
}

/** The item with the id of its group's owner, for authorisation. */
export function findBookmarkItemWithOwner(db: Db, id: string): (BookmarkItem & { ownerId: string }) | undefined {
  const r = db
    .select({ item: bookmarkItems, ownerId: bookmarkGroups.userId })
    .from(bookmarkItems)
    .innerJoin(bookmarkGroups, eq(bookmarkGroups.id, bookmarkItems.groupId))
    .where(eq(bookmarkItems.id, id))
    .get();
  return r && { ...r.item, ownerId: r.ownerId };
}

export function removeBookmarkItem(db: Db, id: string): boolean {
  return db.delete(bookmarkItems).where(eq(bookmarkItems.id, id)).returning({ id: bookmarkItems.id }).all().length > 0;
}

/**
 * Delete a group and its items in one transaction. The items would go by cascade too; deleting
 * them explicitly keeps the guarantee even on a connection without `foreign_keys = ON`.
 */
export function deleteBookmarkGroup(db: Db, id: string): { deletedItems: number } {
  return writeTx(db, (tx) => {
    const deletedItems = tx.delete(bookmarkItems).where(eq(bookmarkItems.groupId, id)).returning({ id: bookmarkItems.id }).all().length;
    tx.delete(bookmarkGroups).where(eq(bookmarkGroups.id, id)).run();
    return { deletedItems };
  });
}
