import { and, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { conversationItems, conversations, users, type ConversationItem } from '../db/schema';
import { preparedFor } from '../db/prepared';
import { newId } from '../ids';

/*
 * Group messages are the items of the group's conversation (so `chat/*` sees the same history).
 * The chat store has no paged, sender-joined listing yet, so this file reads the items table
 * directly; it only ever touches the user and assistant items of a group's own conversation.
 * Appending is `appendItem` of the chat store as one prepared statement: sending a group message
 * is the hottest write path, and drizzle would re-prepare its three statements on every call.
 */

const hot = preparedFor((db) => ({
  insertItem: db
    .insert(conversationItems)
    .values({
      id: sql.placeholder('id'),
      conversationId: sql.placeholder('conversationId'),
      position: sql`(SELECT coalesce(max(${conversationItems.position}), -1) + 1 FROM ${conversationItems} WHERE ${conversationItems.conversationId} = ${sql.placeholder('conversationId')})`,
      role: sql.placeholder('role'),
      content: sql.placeholder('content'),
      parts: sql.placeholder('parts'),
      authorId: sql.placeholder('authorId'),
      createdAt: sql.placeholder('now'),
    })
    .returning()
    .prepare(),
  touchConversation: db
    .update(conversations)
    .set({ updatedAt: sql`${sql.placeholder('now')}` })
    .where(eq(conversations.id, sql.placeholder('conversationId')))
    .prepare(),
}));

/** Append a message at the end of the group's conversation. Call inside the write transaction, with the root connection. */
export function appendGroupItem(
  db: Db,
  input: { conversationId: string; role: 'user' | 'assistant'; content: string; parts?: unknown[]; authorId?: string | null },
  now: number,
): ConversationItem {
  const item = hot(db).insertItem.get({
    id: newId(),
    conversationId: input.conversationId,
    role: input.role,
    content: input.content,
    parts: input.parts ?? [],
    authorId: input.authorId ?? null,
    now,
  })!;
  hot(db).touchConversation.run({ conversationId: input.conversationId, now });
  return item;
}

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
