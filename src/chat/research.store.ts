import { and, asc, desc, eq } from 'drizzle-orm';
import type { ConversationItem, ResponseRow } from '../db/schema';
import { allRows, getRow, type Tx, type Work } from '../db/work';

/**
 * A user's deep-research runs, the newest first: the responses of kind `research` they started in
 * the conversations they own. Reached through the conversations' owner (indexed), not by scanning
 * every response.
 */
export function* listResearchOf({ db, t }: Tx, userId: string, limit: number): Work<ResponseRow[]> {
  const rows = yield* allRows(
    db
      .select({ r: t.responses })
      .from(t.conversations)
      .innerJoin(t.responses, eq(t.responses.conversationId, t.conversations.id))
      .where(and(eq(t.conversations.ownerId, userId), eq(t.responses.userId, userId), eq(t.responses.kind, 'research')))
      .orderBy(desc(t.responses.createdAt), desc(t.responses.id))
      .limit(limit),
  );
  return rows.map((row) => row.r);
}

/**
 * The answer a finished response stored: the assistant item its turn appended when it ended,
 * stamped with the same instant as the response's `finishedAt` (src/chat/respond.ts, `finish`).
 * Undefined while it runs, and for a turn that ended with nothing to keep.
 */
export function* findAnswerOf({ db, t }: Tx, response: ResponseRow): Work<ConversationItem | undefined> {
  if (response.finishedAt == null) return undefined;
  return yield* getRow(
    db
      .select()
      .from(t.conversationItems)
      .where(and(eq(t.conversationItems.conversationId, response.conversationId), eq(t.conversationItems.role, 'assistant'), eq(t.conversationItems.createdAt, response.finishedAt)))
      .orderBy(asc(t.conversationItems.position))
      .limit(1),
  );
}
