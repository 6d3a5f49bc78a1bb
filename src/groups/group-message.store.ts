import { and, desc, eq, inArray, lt } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { conversationItems, users, type ConversationItem } from '../db/schema';
import { preparedFor } from '../db/prepared';
import { newId } from '../ids';

/*
 * Group messages are the items of the group's conversation (so `chat/*` sees the same history).
 * The chat store has no paged, sender-joined listing yet, so this file reads the items table
 * directly; it only ever touches the user and assistant items of a group's own conversation.
 * Appending is `appendItem` of the chat store as plain SQLite statements prepared once: sending
 * a group message is the hottest write path, and drizzle would re-prepare its statements on every
 * call, then fill placeholders and map the row back (parsing the `parts` JSON just written).
 */

const hot = preparedFor((db) => ({
  // The next position and the insert are two statements, not one INSERT with the max() as a
  // subquery, and the insert has no RETURNING: together 15 → 8 µs a message. In one statement
  // SQLite reads the table it is writing, and RETURNING makes it open a statement journal, which
  // also flushes the full-text index's pending terms to disk (bench/RESULTS.md, change 14). Both
  // run inside the write transaction, so no other writer can take the position in between.
  nextPosition: db.$client.prepare<{ position: number }, [string]>(
    'SELECT coalesce(max(position), -1) + 1 AS position FROM conversation_items WHERE conversation_id = ?1',
  ),
  insertItem: db.$client.prepare<never, [string, string, number, string, string, string, string | null, number]>(
    `INSERT INTO conversation_items (id, conversation_id, position, role, content, parts, author_id, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`,
  ),
  touchConversation: db.$client.prepare<never, [string, number]>('UPDATE conversations SET updated_at = ?2 WHERE id = ?1'),
}));

/** Append a message at the end of the group's conversation. Call inside the write transaction, with the root connection. */
export function appendGroupItem(
  db: Db,
  input: { conversationId: string; role: 'user' | 'assistant'; content: string; parts?: unknown[]; authorId?: string | null },
  now: number,
): ConversationItem {
  const stmts = hot(db);
  const id = newId();
  const parts = input.parts ?? [];
  const authorId = input.authorId ?? null;
  const position = stmts.nextPosition.all(input.conversationId)[0]!.position;
  stmts.insertItem.run(id, input.conversationId, position, input.role, input.content, JSON.stringify(parts), authorId, now);
  stmts.touchConversation.run(input.conversationId, now);
  return { id, conversationId: input.conversationId, position, role: input.role, content: input.content, parts, authorId, createdAt: now };
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
