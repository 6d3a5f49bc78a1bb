import { and, desc, eq, inArray, lt } from 'drizzle-orm';
import type { ConversationItem } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';

/*
 * Group messages are the items of the group's conversation (so `chat/*` sees the same history),
 * appended with the chat store's `appendItem`. The chat store has no paged, sender-joined listing
 * yet, so this file reads the items table directly; it only ever touches the user and assistant
 * items of a group's own conversation.
 */

export type ItemWithSender = Pick<ConversationItem, 'id' | 'role' | 'content' | 'parts' | 'createdAt' | 'authorId'> & {
  senderName: string | null;
  senderImage: string | null;
  /** An answer by a shared assistant: which, and its name then (group_answer_authors). */
  assistantId: string | null;
  assistantName: string | null;
};

/** The newest `limit` messages before the item `beforeId` (or the newest overall), oldest first. */
export function* listGroupItems(
  { db, t }: Tx,
  conversationId: string,
  opts: { beforeId?: string; limit: number },
): Work<{ items: ItemWithSender[]; hasMore: boolean }> {
  const items = t.conversationItems;
  let beforePosition: number | undefined;
  if (opts.beforeId) {
    const anchor = yield* getRow(
      db
        .select({ position: items.position })
        .from(items)
        .where(and(eq(items.conversationId, conversationId), eq(items.id, opts.beforeId))),
    );
    if (!anchor) return { items: [], hasMore: false };
    beforePosition = anchor.position;
  }
  const rows = yield* allRows(
    db
      .select({
        id: items.id,
        role: items.role,
        content: items.content,
        parts: items.parts,
        createdAt: items.createdAt,
        authorId: items.authorId,
        senderName: t.users.name,
        senderImage: t.users.image,
        assistantId: t.groupAnswerAuthors.assistantId,
        assistantName: t.groupAnswerAuthors.name,
      })
      .from(items)
      .leftJoin(t.users, eq(t.users.id, items.authorId))
      .leftJoin(t.groupAnswerAuthors, eq(t.groupAnswerAuthors.itemId, items.id))
      .where(
        and(
          eq(items.conversationId, conversationId),
          inArray(items.role, ['user', 'assistant']),
          beforePosition === undefined ? undefined : lt(items.position, beforePosition),
        ),
      )
      .orderBy(desc(items.position))
      .limit(opts.limit + 1),
  );
  const hasMore = rows.length > opts.limit;
  return { items: rows.slice(0, opts.limit).reverse(), hasMore };
}

/** Record which shared assistant wrote the answer `itemId`, under the name it has now. */
export function* recordAnswerAuthor({ db, t }: Tx, itemId: string, author: { assistantId: string; name: string }): Work<void> {
  yield* exec(db.insert(t.groupAnswerAuthors).values({ itemId, assistantId: author.assistantId, name: author.name }));
}
