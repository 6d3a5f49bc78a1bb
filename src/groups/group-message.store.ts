import { and, desc, eq, inArray, lt } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { conversationItems, users, type ConversationItem } from '../db/schema';

/*
 * Group messages are the items of the group's conversation (so `chat/*` sees the same history),
 * appended with the chat store's `appendItem`. The chat store has no paged, sender-joined listing
 * yet, so this file reads the items table directly; it only ever touches the user and assistant
 * items of a group's own conversation.
 */

export type ItemWithSender = Pick<ConversationItem, 'id' | 'role' | 'content' | 'parts' | 'createdAt' | 'authorId'> & {
  senderName: string | null;
  senderImage: string | null;
};

/** The newest `limit` messages before the item `beforeId` (or the newest overall), oldest first. */
export function listGroupItems(db: Db, conversationId: string, opts: { beforeId?: string; limit: number }): { items: ItemWithSender[]; hasMore: boolean } {
  let beforePosition: number | undefined;
  if (opts.beforeId) {
    const anchor = db
      .select({ position: conversationItems.position })
      .from(conversationItems)
      .where(and(eq(conversationItems.conversationId, conversationId), eq(conversationItems.id, opts.beforeId)))
      .get();
    if (!anchor) return { items: [], hasMore: false };
    beforePosition = anchor.position;
  }
  const rows = db
    .select({
      id: conversationItems.id,
      role: conversationItems.role,
      content: conversationItems.content,
      parts: conversationItems.parts,
      createdAt: conversationItems.createdAt,
      authorId: conversationItems.authorId,
      senderName: users.name,
      senderImage: users.image,
    })
    .from(conversationItems)
    .leftJoin(users, eq(users.id, conversationItems.authorId))
    .where(
      and(
        eq(conversationItems.conversationId, conversationId),
        inArray(conversationItems.role, ['user', 'assistant']),
        beforePosition === undefined ? undefined : lt(conversationItems.position, beforePosition),
      ),
    )
    .orderBy(desc(conversationItems.position))
    .limit(opts.limit + 1)
    .all();
  const hasMore = rows.length > opts.limit;
  return { items: rows.slice(0, opts.limit).reverse(), hasMore };
}
