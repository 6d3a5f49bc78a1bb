import { sql } from 'drizzle-orm';
import { rawRows, type Tx, type Work } from '../db/work';

type Hit = { text: string; conversationId: string };

/**
 * Full-text search over the caller's own past conversations, one of the few queries written per
 * database (src/db/work.ts). SQLite: the FTS5 table `conversation_items_fts`, kept in step by
 * triggers, ranked by bm25. PostgreSQL: the generated tsvector column `search` (migrations/pg/0001)
 * with the 'simple' configuration, ranked by ts_rank. Both match any of the query's words, case
 * aside; SQLite's tokenizer also folds diacritics ("über" finds "uber"), PostgreSQL's 'simple' does not.
 */
export function* searchHistory({ dialect }: Tx, input: { userId: string; query: string; excludeConversationId?: string; limit?: number }): Work<Hit[]> {
  const words = wordsOf(input.query);
  if (!words.length) return [];
  const exclude = input.excludeConversationId ?? '';
  const limit = input.limit ?? 5;
  if (dialect === 'pg') {
    // The words are letters and digits only, so joined by | they are a valid tsquery of ORs.
    const query = words.join(' | ');
    return yield* rawRows<Hit>(
      sql`SELECT i.content AS text, i.conversation_id AS "conversationId"
            FROM conversation_items i
            JOIN conversations c ON c.id = i.conversation_id
           WHERE i.search @@ to_tsquery('simple', ${query}) AND c.owner_id = ${input.userId} AND c.id <> ${exclude}
           ORDER BY ts_rank(i.search, to_tsquery('simple', ${query})) DESC, i.id
           LIMIT ${limit}`,
    );
  }
  return yield* rawRows<Hit>(
    sql`SELECT i.content AS text, i.conversation_id AS conversationId
          FROM conversation_items_fts f
          JOIN conversation_items i ON i.rowid = f.rowid
          JOIN conversations c ON c.id = i.conversation_id
         WHERE conversation_items_fts MATCH ${toMatchQuery(input.query)} AND c.owner_id = ${input.userId} AND c.id <> ${exclude}
         ORDER BY bm25(conversation_items_fts) LIMIT ${limit}`,
  );
}

/** The query's distinct words, lower-cased, at most 12: no user text is parsed as query syntax. */
export const wordsOf = (query: string) => [...new Set((query.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase()))].slice(0, 12);

/** Words of the query as quoted FTS5 terms joined by OR. */
export const toMatchQuery = (query: string): string =>
  wordsOf(query)
    .map((w) => `"${w}"`)
    .join(' OR ');
