import { and, asc, eq, gt, gte, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import { allRows, exec, execCount, getRow, rawRows, type Tx, type Work } from '../db/work';
import type { ChunkHit } from './file-text.store';
import type { StoredVector } from './embeddings-vectors';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike. Vectors are
// base64 to drizzle's queries on both databases (src/db/vector-column.ts), so the same queries
// serve both.

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
 * Vectors of `model` (base64) with their sign bits (`code`), or nulls for a chunk the model
 * refused (it is not sent again); the documents' `vectors_version` moves on in the same
 * transaction, so that every instance's search index reads their codes again
 * (src/files/embeddings-index.ts).
 */
export function* saveEmbeddings(tx: Tx, model: string, rows: { id: string; fileId: string; embedding: string | null; code: string | null }[]): Work<void> {
  const { db, t } = tx;
  for (const row of rows)
    yield* exec(db.update(t.fileChunks).set({ embedding: row.embedding, embeddingCode: row.code, embeddingModel: model }).where(eq(t.fileChunks.id, row.id)));
  yield* bumpVectorsVersion(tx, [...new Set(rows.map((r) => r.fileId))]);
}

/**
 * Vectors stored without their sign bits (before codes were kept), at most `limit`, whatever
 * their model: found through the partial index of exactly those, so a library already coded
 * costs one empty lookup.
 */
export function* listUncodedVectors({ db, t }: Tx, limit: number): Work<{ id: string; embedding: string }[]> {
  const c = t.fileChunks;
  const rows = yield* allRows(
    db
      .select({ id: c.id, embedding: c.embedding })
      .from(c)
      .where(and(isNotNull(c.embedding), isNull(c.embeddingCode)))
      .limit(limit),
  );
  return rows as { id: string; embedding: string }[];
}

/**
 * The codes of vectors stored without them. The version is left alone: a code is a function of
 * its vector, so one an index built from the vector is the same.
 */
export function* saveCodes({ db, t }: Tx, rows: { id: string; code: string }[]): Work<void> {
  for (const row of rows) yield* exec(db.update(t.fileChunks).set({ embeddingCode: row.code }).where(eq(t.fileChunks.id, row.id)));
}

/** The documents' vectors changed: searches read their codes again. */
export function* bumpVectorsVersion({ db, t }: Tx, fileIds: string[]): Work<void> {
  if (fileIds.length) yield* exec(db.update(t.files).set({ vectorsVersion: sql`${t.files.vectorsVersion} + 1` }).where(inArray(t.files.id, fileIds)));
}

export type ChunkKey = { fileId: string; seq: number };

/**
 * The documents the user may read (their own, and those attached to `conversationId` when given:
 * the caller checked they may read it), with the version of their vectors: asked at every
 * search, so access is the database's answer of the moment, never the index's memory.
 */
export function* listSearchableFiles(
  { db, t }: Tx,
  input: { userId: string; conversationId?: string; alsoFileIds?: readonly string[] },
): Work<{ fileId: string; version: number }[]> {
  const f = t.files;
  const readable = or(
    eq(f.userId, input.userId),
    input.conversationId ? sql`${f.id} IN (SELECT file_id FROM file_attachments WHERE conversation_id = ${input.conversationId})` : undefined,
    input.alsoFileIds?.length ? inArray(f.id, [...input.alsoFileIds]) : undefined,
  );
  return yield* allRows(
    db
      .select({ fileId: f.id, version: f.vectorsVersion })
      .from(f)
      .where(and(readable, eq(f.kind, 'document'))),
  );
}

/** How many chunks of each document have a vector of the model: `coded` with their sign bits, `uncoded` without (yet). */
export type VectorCount = { fileId: string; coded: number; uncoded: number };

/**
 * The documents' chunks with a vector of `model`, in id order: what reading their codes plans its
 * pages by. Both counts come from indexes (codes, and vectors without codes), no row read.
 */
export function* countVectors({ db, t }: Tx, fileIds: string[], model: string): Work<VectorCount[]> {
  const c = t.fileChunks;
  const count = sql<number>`count(*)`.mapWith(Number);
  const coded = yield* allRows(
    db
      .select({ fileId: c.fileId, n: count })
      .from(c)
      .where(and(inArray(c.fileId, fileIds), eq(c.embeddingModel, model), isNotNull(c.embeddingCode)))
      .groupBy(c.fileId),
  );
  const uncoded = yield* allRows(
    db
      .select({ fileId: c.fileId, n: count })
      .from(c)
      .where(and(inArray(c.fileId, fileIds), isNotNull(c.embedding), isNull(c.embeddingCode), eq(c.embeddingModel, model)))
      .groupBy(c.fileId),
  );
  const counts = new Map<string, VectorCount>();
  for (const r of coded) counts.set(r.fileId, { fileId: r.fileId, coded: r.n, uncoded: 0 });
  for (const r of uncoded) counts.set(r.fileId, { fileId: r.fileId, coded: counts.get(r.fileId)?.coded ?? 0, uncoded: r.n });
  return [...counts.values()].sort((x, y) => (x.fileId < y.fileId ? -1 : x.fileId > y.fileId ? 1 : 0));
}

/** Every chunk of a few files, or a range of one large file's chunks (`fromSeq` ≤ seq < `toSeq`). */
export type ChunkPage = { fileIds: string[] } | { fileId: string; fromSeq: number; toSeq: number };

const pageWhere = (c: Tx['t']['fileChunks'], page: ChunkPage) =>
  'fileIds' in page ? inArray(c.fileId, page.fileIds) : and(eq(c.fileId, page.fileId), gte(c.seq, page.fromSeq), lt(c.seq, page.toSeq));

/**
 * One page of the sign bits of `model`'s vectors: a range of the codes' covering index on both
 * databases (the rows themselves, text and vector, are never read), with nothing to sort.
 */
export function* readCodePage({ db, t }: Tx, page: ChunkPage, model: string): Work<{ fileId: string; seq: number; code: string }[]> {
  const c = t.fileChunks;
  const rows = yield* allRows(
    db
      .select({ fileId: c.fileId, seq: c.seq, code: c.embeddingCode })
      .from(c)
      .where(and(pageWhere(c, page), eq(c.embeddingModel, model), isNotNull(c.embeddingCode))),
  );
  return rows as { fileId: string; seq: number; code: string }[];
}

export type VectorRow = { fileId: string; seq: number; model: string | null; embedding: string };
/** A raw statement's row: the vector as the database gives it (bytes on PostgreSQL), not mapped to base64. */
export type CandidateRow = Omit<VectorRow, 'embedding'> & { embedding: StoredVector };

/**
 * One page of stored vectors of `model`; `uncoded`: only those without their sign bits yet
 * (through that partial index). A range of the (file_id, seq) index on both databases.
 */
export function* readVectorPage({ db, t }: Tx, page: ChunkPage, model: string, opts: { uncoded?: boolean } = {}): Work<VectorRow[]> {
  const c = t.fileChunks;
  const rows = yield* allRows(
    db
      .select({ fileId: c.fileId, seq: c.seq, model: c.embeddingModel, embedding: c.embedding })
      .from(c)
      .where(and(pageWhere(c, page), isNotNull(c.embedding), opts.uncoded ? isNull(c.embeddingCode) : undefined, eq(c.embeddingModel, model))),
  );
  return rows as VectorRow[];
}

/**
 * The stored vectors of the chunks named (the candidates of a search), with what a hit shows, in
 * no particular order: one statement, the keys a table of values joined to the (file_id, seq)
 * index, the same SQL on both databases. An OR of one `file_id = ? AND seq IN (…)` a document, as
 * before, cost 16–22 ms to plan and run when the candidates were spread over a thousand
 * documents, against 2–5 ms so (bench/file-search.ts, 100 candidates). The text comes along:
 * SQLite reads it anyway to reach the vector after it in the row, and the search needs no other
 * read.
 */
export function* readChunkVectors(_tx: Tx, keys: ChunkKey[]): Work<(CandidateRow & ChunkHit)[]> {
  if (!keys.length) return [];
  const values = sql.join(
    keys.map((k) => sql`(${k.fileId}, CAST(${k.seq} AS integer))`),
    sql`, `,
  );
  // CAST: PostgreSQL's bigint columns would come back as strings.
  return yield* rawRows<CandidateRow & ChunkHit>(
    sql`WITH k(file_id, seq) AS (VALUES ${values})
        SELECT c.file_id AS "fileId", CAST(c.seq AS integer) AS seq, c.embedding_model AS model, c.embedding, f.filename, CAST(c.page AS integer) AS page, c.content
          FROM k JOIN file_chunks c ON c.file_id = k.file_id AND c.seq = k.seq JOIN files f ON f.id = c.file_id
         WHERE c.embedding IS NOT NULL`,
  );
}

export type ModelFingerprint = { model: string; generation: number; probe: string; since: number };

/** What the model answered for the probe text, as last recorded (src/files/embeddings-model.ts). */
export function* findModelFingerprint({ db, t }: Tx, model: string): Work<ModelFingerprint | undefined> {
  const row = yield* getRow(db.select().from(t.embeddingModels).where(eq(t.embeddingModels.model, model)));
  return row && { ...row, generation: Number(row.generation), since: Number(row.since) };
}

/** The model's first fingerprint; another instance's, taken at the same moment, wins (nothing written). */
export function* addModelFingerprint({ db, t }: Tx, row: ModelFingerprint): Work<void> {
  yield* exec(db.insert(t.embeddingModels).values(row).onConflictDoNothing());
}

/**
 * Another model under the same name: the next generation, unless another instance recorded it
 * first (false: nothing written, read it again).
 */
export function* advanceModelGeneration({ db, t }: Tx, row: ModelFingerprint): Work<boolean> {
  const m = t.embeddingModels;
  const changed = yield* execCount(
    db
      .update(m)
      .set({ generation: row.generation, probe: row.probe, since: row.since })
      .where(and(eq(m.model, row.model), eq(m.generation, row.generation - 1))),
  );
  return changed > 0;
}
