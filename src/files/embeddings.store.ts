import { and, asc, eq, gt, gte, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import { allRows, exec, type Tx, type Work } from '../db/work';
import type { ChunkHit } from './file-text.store';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike. Vectors are
// plain text, so the same queries serve both databases.

/**
 * Chunks with no vector of `model` yet (never embedded, or by another model), at most `limit`;
 * of one file when given. Written as ranges around `model` so both databases read the model's
 * index instead of every row (and its vector).
 */
export function* listChunksToEmbed({ db, t }: Tx, model: string, limit: number, fileId?: string): Work<{ id: string; content: string }[]> {
  const c = t.fileChunks;
  const missing = or(isNull(c.embeddingModel), lt(c.embeddingModel, model), gt(c.embeddingModel, model));
  return yield* allRows(
    db
      .select({ id: c.id, content: c.content })
      .from(c)
      .where(fileId ? and(eq(c.fileId, fileId), missing) : missing)
      .limit(limit),
  );
}

/** Vectors of `model` (base64), or null for a chunk the model refused (it is not sent again). */
export function* saveEmbeddings({ db, t }: Tx, model: string, rows: { id: string; embedding: string | null }[]): Work<void> {
  for (const row of rows) yield* exec(db.update(t.fileChunks).set({ embedding: row.embedding, embeddingModel: model }).where(eq(t.fileChunks.id, row.id)));
}

export type VectorRow = { fileId: string; seq: number; model: string | null; embedding: string };
export type ChunkKey = { fileId: string; seq: number };

/**
 * The documents the user may read (their own, and those attached to `conversationId` when given:
 * the caller checked they may read it) that have chunks, with how many, in id order: what a scan
 * of their vectors plans its pages by. Counted from the (file_id, seq) index, no vector read.
 */
export function* countReadableChunks({ db, t }: Tx, input: { userId: string; conversationId?: string }): Work<{ fileId: string; chunks: number }[]> {
  const c = t.fileChunks;
  const readable = input.conversationId
    ? sql`${c.fileId} IN (SELECT id FROM files WHERE user_id = ${input.userId} UNION SELECT file_id FROM file_attachments WHERE conversation_id = ${input.conversationId})`
    : sql`${c.fileId} IN (SELECT id FROM files WHERE user_id = ${input.userId})`;
  return yield* allRows(
    db
      .select({ fileId: c.fileId, chunks: sql<number>`count(*)`.mapWith(Number) })
      .from(c)
      .where(readable)
      .groupBy(c.fileId)
      .orderBy(asc(c.fileId)),
  );
}

/**
 * One page of stored vectors: every chunk of a few files, or a range of one large file's chunks
 * (`fromSeq` ≤ seq < `toSeq`). Either is a range of the (file_id, seq) index on both databases,
 * with nothing to sort: the order of a scan does not matter to a top-k.
 */
export function* readVectorPage({ db, t }: Tx, page: { fileIds: string[] } | { fileId: string; fromSeq: number; toSeq: number }): Work<VectorRow[]> {
  const c = t.fileChunks;
  const which = 'fileIds' in page ? inArray(c.fileId, page.fileIds) : and(eq(c.fileId, page.fileId), gte(c.seq, page.fromSeq), lt(c.seq, page.toSeq));
  const rows = yield* allRows(
    db
      .select({ fileId: c.fileId, seq: c.seq, model: c.embeddingModel, embedding: c.embedding })
      .from(c)
      .where(and(which, isNotNull(c.embedding))),
  );
  return rows as VectorRow[];
}

/** The chunks named, with their file's name, in no particular order. */
export function* findChunkHits({ db, t }: Tx, keys: ChunkKey[]): Work<ChunkHit[]> {
  if (!keys.length) return [];
  const c = t.fileChunks;
  return yield* allRows(
    db
      .select({ fileId: c.fileId, filename: t.files.filename, seq: c.seq, page: c.page, content: c.content })
      .from(c)
      .innerJoin(t.files, eq(t.files.id, c.fileId))
      .where(or(...keys.map((k) => and(eq(c.fileId, k.fileId), eq(c.seq, k.seq))))),
  );
}
