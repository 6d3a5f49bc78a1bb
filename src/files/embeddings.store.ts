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
export function* listChunksToEmbed({ db, t }: Tx, model: string, limit: number, fileId?: string): Work<ChunkToEmbed[]> {
  const c = t.fileChunks;
  const missing = or(isNull(c.embeddingModel), lt(c.embeddingModel, model), gt(c.embeddingModel, model));
  return yield* allRows(
    db
      .select({ id: c.id, fileId: c.fileId, content: c.content, userId: t.files.userId })
      .from(c)
      .innerJoin(t.files, eq(t.files.id, c.fileId))
      .where(fileId ? and(eq(c.fileId, fileId), missing) : missing)
      .limit(limit),
  );
}

/** `userId`: the document's owner, whose usage its embedding is (docs/usage.md). */
export type ChunkToEmbed = { id: string; fileId: string; content: string; userId: string };

/**
 * Vectors of `model` (base64), or null for a chunk the model refused (it is not sent again); the
 * documents' `vectors_version` moves on in the same transaction, so that every instance's search
 * index reads their codes again (src/files/embeddings-index.ts).
 */
export function* saveEmbeddings(tx: Tx, model: string, rows: { id: string; fileId: string; embedding: string | null }[]): Work<void> {
  const { db, t } = tx;
  for (const row of rows) yield* exec(db.update(t.fileChunks).set({ embedding: row.embedding, embeddingModel: model }).where(eq(t.fileChunks.id, row.id)));
  yield* bumpVectorsVersion(tx, [...new Set(rows.map((r) => r.fileId))]);
}

/** The documents' vectors changed: searches read their codes again. */
export function* bumpVectorsVersion({ db, t }: Tx, fileIds: string[]): Work<void> {
  if (fileIds.length) yield* exec(db.update(t.files).set({ vectorsVersion: sql`${t.files.vectorsVersion} + 1` }).where(inArray(t.files.id, fileIds)));
}

export type VectorRow = { fileId: string; seq: number; model: string | null; embedding: string };
export type ChunkKey = { fileId: string; seq: number };

/**
 * The documents the user may read (their own, and those attached to `conversationId` when given:
 * the caller checked they may read it), with the version of their vectors: asked at every
 * search, so access is the database's answer of the moment, never the index's memory.
 */
export function* listSearchableFiles({ db, t }: Tx, input: { userId: string; conversationId?: string }): Work<{ fileId: string; version: number }[]> {
  const f = t.files;
  const readable = input.conversationId
    ? or(eq(f.userId, input.userId), sql`${f.id} IN (SELECT file_id FROM file_attachments WHERE conversation_id = ${input.conversationId})`)
    : eq(f.userId, input.userId);
  return yield* allRows(
    db
      .select({ fileId: f.id, version: f.vectorsVersion })
      .from(f)
      .where(and(readable, eq(f.kind, 'document'))),
  );
}

/**
 * How many chunks each of the documents has, in id order: what reading their vectors plans its
 * pages by. Counted from the (file_id, seq) index, no vector read.
 */
export function* countChunks({ db, t }: Tx, fileIds: string[]): Work<{ fileId: string; chunks: number }[]> {
  const c = t.fileChunks;
  return yield* allRows(
    db
      .select({ fileId: c.fileId, chunks: sql<number>`count(*)`.mapWith(Number) })
      .from(c)
      .where(inArray(c.fileId, fileIds))
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

/**
 * The stored vectors of the chunks named (the candidates of a search), with what a hit shows, in
 * no particular order: one statement, a document's chunks together (`file_id = ? AND seq IN
 * (…)`), each a range of the (file_id, seq) index on both databases. The text comes along: SQLite
 * reads it anyway to reach the vector after it in the row, and the search needs no other read.
 */
export function* readChunkVectors({ db, t }: Tx, keys: ChunkKey[]): Work<(VectorRow & ChunkHit)[]> {
  if (!keys.length) return [];
  const c = t.fileChunks;
  const byFile = new Map<string, number[]>();
  for (const k of keys) {
    const seqs = byFile.get(k.fileId);
    if (seqs) seqs.push(k.seq);
    else byFile.set(k.fileId, [k.seq]);
  }
  const rows = yield* allRows(
    db
      .select({ fileId: c.fileId, seq: c.seq, model: c.embeddingModel, embedding: c.embedding, filename: t.files.filename, page: c.page, content: c.content })
      .from(c)
      .innerJoin(t.files, eq(t.files.id, c.fileId))
      .where(and(or(...[...byFile].map(([fileId, seqs]) => and(eq(c.fileId, fileId), inArray(c.seq, seqs)))), isNotNull(c.embedding))),
  );
  return rows as (VectorRow & ChunkHit)[];
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
