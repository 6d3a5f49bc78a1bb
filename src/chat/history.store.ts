import type { Db } from '../db/connection';

/**
 * Full-text search over the caller's own past conversations (FTS5 table
 * `conversation_items_fts`, kept in sync with `conversation_items` by triggers).
 */
export function searchHistory(db: Db, input: { userId: string; query: string; excludeConversationId?: string; limit?: number }): { text: string; conversationId: string }[] {
  const match = toMatchQuery(input.query);
  if (!match) return [];
  return db.$client
    .query<{ text: string; conversationId: string }, [string, string, string, number]>(
      `SELECT i.content AS text, i.conversation_id AS conversationId
         FROM conversation_items_fts f
         JOIN conversation_items i ON i.rowid = f.rowid
         JOIN conversations c ON c.id = i.conversation_id
        WHERE conversation_items_fts MATCH ?1 AND c.owner_id = ?2 AND c.id <> ?3
        ORDER BY bm25(conversation_items_fts) LIMIT ?4`,
    )
    .all(match, input.userId, input.excludeConversationId ?? '', input.limit ?? 5);
}

/** Words of the query as quoted FTS5 terms joined by OR: no user text is parsed as FTS syntax. */
export function toMatchQuery(query: string): string {
  const words = query.match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.map((w) => w.toLowerCase()))]
    .slice(0, 12)
    .map((w) => `"${w}"`)
    .join(' OR ');
}
