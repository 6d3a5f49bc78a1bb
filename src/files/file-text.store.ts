import { and, asc, eq, sql } from 'drizzle-orm';
import type { FileChunk, FileRow } from '../db/schema';
import { allRows, exec, rawRows, type Tx, type Work } from '../db/work';
import { newId } from '../ids';
import { toMatchQuery, wordsOf } from '../chat/history.store';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/** Documents whose text is still to be extracted, oldest first (the start-up pass, a wake-up). */
export function* listPendingFiles({ db, t }: Tx, limit: number): Work<FileRow[]> {
  return yield* allRows(db.select().from(t.files).where(eq(t.files.textStatus, 'pending')).orderBy(asc(t.files.createdAt)).limit(limit));
}

/** A document's text, in chunks, replacing what was there; the file is `ready` with it. */
export function* saveFileText(
  { db, t }: Tx,
  fileId: string,
  chunks: { content: string; startChar: number; page?: number | null }[],
  totalChars: number,
): Work<void> {
  yield* exec(db.delete(t.fileChunks).where(eq(t.fileChunks.fileId, fileId)));
  // In slices: SQLite binds at most 32,766 values a statement.
  for (let i = 0; i < chunks.length; i += 500) {
    const slice = chunks.slice(i, i + 500).map((c, j) => ({ id: newId(), fileId, seq: i + j, page: c.page ?? null, startChar: c.startChar, content: c.content }));
    yield* exec(db.insert(t.fileChunks).values(slice));
  }
  // Its vectors went with the old chunks: searches drop the codes they kept of them.
  yield* exec(db.update(t.files).set({ textStatus: 'ready', textError: null, textChars: totalChars, vectorsVersion: sql`${t.files.vectorsVersion} + 1` }).where(eq(t.files.id, fileId)));
}

export function* failFileText({ db, t }: Tx, fileId: string, error: string): Work<void> {
  yield* exec(db.update(t.files).set({ textStatus: 'failed', textError: error }).where(eq(t.files.id, fileId)));
}

/** A document's chunks in order, from `fromSeq`, at most `limit` (reading a file a page at a time). */
export function* readChunks({ db, t }: Tx, fileId: string, fromSeq: number, limit: number): Work<FileChunk[]> {
  return yield* allRows(
    db
      .select()
      .from(t.fileChunks)
      .where(and(eq(t.fileChunks.fileId, fileId), sql`${t.fileChunks.seq} >= ${fromSeq}`))
      .orderBy(asc(t.fileChunks.seq))
      .limit(limit),
  );
}

export type ChunkHit = { fileId: string; filename: string; seq: number; page: number | null; content: string };

/**
 * Full-text search over the chunks of documents the user may read: their own files, and the
 * files attached to `conversationId` when given (the caller checked they may read it). Written
 * per database as history search is (src/chat/history.store.ts): FTS5 ranked by bm25 on SQLite,
 * the tsvector column ranked by ts_rank on PostgreSQL; any of the query's words matches.
 */
export function* searchFileChunks(
  { dialect }: Tx,
  input: { userId: string; query: string; conversationId?: string; alsoFileIds?: readonly string[]; limit: number },
): Work<ChunkHit[]> {
  const words = wordsOf(input.query);
  if (!words.length) return [];
  const conversationId = input.conversationId ?? '';
  const also = input.alsoFileIds?.length ? sql` OR f.id IN (${sql.join(input.alsoFileIds.map((id) => sql`${id}`), sql`, `)})` : sql``;
  const readable = sql`(f.user_id = ${input.userId} OR EXISTS (SELECT 1 FROM file_attachments a WHERE a.file_id = f.id AND a.conversation_id = ${conversationId})${also})`;
  if (dialect === 'pg') {
    const query = words.join(' | ');
    return yield* rawRows<ChunkHit>(
      sql`SELECT c.file_id AS "fileId", f.filename, c.seq::int AS seq, c.page::int AS page, c.content
            FROM file_chunks c JOIN files f ON f.id = c.file_id
           WHERE c.search @@ to_tsquery('simple', ${query}) AND ${readable}
           ORDER BY ts_rank(c.search, to_tsquery('simple', ${query})) DESC, c.id
           LIMIT ${input.limit}`,
    );
  }
  return yield* rawRows<ChunkHit>(
    sql`SELECT c.file_id AS fileId, f.filename, c.seq, c.page, c.content
          FROM file_chunks_fts x
          JOIN file_chunks c ON c.rowid = x.rowid
          JOIN files f ON f.id = c.file_id
         WHERE file_chunks_fts MATCH ${toMatchQuery(input.query)} AND ${readable}
         ORDER BY bm25(file_chunks_fts) LIMIT ${input.limit}`,
  );
}
