import type { AppDeps } from '../deps';
import { AppError, notSetUp } from '../http/errors';
import { searchFileChunks, type ChunkHit } from './file-text.store';
import { embeddingModelKey, EmbeddingsError, embedTexts } from './embeddings-client';
import { countReadableChunks, findChunkHits, readVectorPage, type ChunkKey } from './embeddings.store';
import { createScorer, TopK } from './embeddings-vectors';

export type SearchMode = 'text' | 'semantic' | 'hybrid';

/**
 * Base64 characters of vectors one page of a scan reads, at most: 256 vectors of 1,536 floats,
 * 1,000 of 384. The garbage of the pages read is what lifts the process's memory during a scan
 * (the collector lets it pile up a while): measured with 10,000 vectors of 1,536 floats, pages of
 * 1, 2, 4 and 8 MB peaked at about 107, 110, 136 and 187 MB, the larger ones a little faster
 * (bench/file-search.ts, docs/files.md).
 */
const PAGE_CHARS = 2 * 1024 * 1024;
const MAX_PAGE_ROWS = 2000;
/** A search's query is one short text: a server slower than this is failing, and text search answers instead. */
const QUERY_TIMEOUT_MS = 15_000;
/** How deep each list goes before the two are fused, and reciprocal rank fusion's constant (60, as in its paper). */
const FUSE_DEPTH = 50;
const RRF_K = 60;

type SearchInput = { userId: string; conversationId?: string; query: string; limit: number; mode?: SearchMode };

/**
 * Search the documents a user may read (docs/files.md, "Semantic search"): by words (full-text),
 * by meaning (the query's vector against the chunks' vectors), or both fused by reciprocal rank
 * (`hybrid`, the default when embeddings are set up). `mode` in the answer is what was done: a
 * hybrid search whose query could not be embedded answers by words alone.
 */
export async function searchDocuments(deps: AppDeps, input: SearchInput): Promise<{ mode: SearchMode; hits: ChunkHit[] }> {
  const embeddings = await deps.connections.embeddings();
  const on = !!embeddings;
  const mode = input.mode ?? (on ? 'hybrid' : 'text');
  const byWords = (limit: number) => deps.store.read((tx) => searchFileChunks(tx, { userId: input.userId, query: input.query, conversationId: input.conversationId, limit }));
  // A blank query (a model's empty tool call) has no meaning to embed, and servers refuse it.
  if (mode === 'text' || !input.query.trim()) return { mode: 'text', hits: await byWords(input.limit) };
  if (!on) {
    if (mode === 'semantic')
      throw notSetUp('Semantic search is not set up on this server: its admin sets PARLEY_EMBEDDINGS_BASE_URL (see docs/files.md). Search with mode "text".');
    return { mode: 'text', hits: await byWords(input.limit) };
  }
  let vector: Float32Array;
  try {
    [vector] = (await embedTexts(embeddings!, [input.query], { timeoutMs: QUERY_TIMEOUT_MS })) as [Float32Array];
  } catch (err) {
    if (!(err instanceof EmbeddingsError)) throw err;
    deps.log.warn('embedding a search query failed', { error: err.message, ...(err.detail ? { upstream: err.detail } : {}) });
    if (mode === 'semantic') throw new AppError('BAD_GATEWAY', { message: err.message, cause: err });
    return { mode: 'text', hits: await byWords(input.limit) };
  }
  const scope = { userId: input.userId, conversationId: input.conversationId };
  if (mode === 'semantic') return { mode, hits: await searchByVector(deps, { ...scope, vector, limit: input.limit, model: embeddingModelKey(embeddings!) }) };
  const depth = Math.max(input.limit, FUSE_DEPTH);
  const words = await byWords(depth);
  const meaning = await searchByVector(deps, { ...scope, vector, limit: depth, model: embeddingModelKey(embeddings!) });
  return { mode, hits: fuseRankings([words, meaning], input.limit) };
}

/**
 * The chunks whose vectors are closest to `vector` (cosine similarity: both are of length 1, so
 * a dot product), among those of the configured model in documents the user may read. The
 * documents' chunks are counted first (from an index), then their vectors read a page at a time
 * and only the best `limit` kept, so memory stays at one page whatever the library's size, and
 * other requests run between pages. Chunks sharing nothing with the query (similarity 0 or less)
 * are left out.
 */
export async function searchByVector(
  deps: Pick<AppDeps, 'store'>,
  input: { userId: string; conversationId?: string; vector: Float32Array; limit: number; model: string },
): Promise<ChunkHit[]> {
  const model = input.model;
  const score = createScorer(input.vector);
  const best = new TopK<ChunkKey>(input.limit);
  const pageRows = Math.max(100, Math.min(MAX_PAGE_ROWS, Math.floor(PAGE_CHARS / (Math.ceil((input.vector.length * 4) / 3) * 4))));
  const files = await deps.store.read((tx) => countReadableChunks(tx, { userId: input.userId, conversationId: input.conversationId }));
  for (const page of planPages(files, pageRows)) {
    // SQLite answers at once, and awaiting a settled promise lets no other request in: a scan of
    // seconds would hold the whole server. Between pages, whatever waits runs first.
    await new Promise((resolve) => setImmediate(resolve));
    const rows = await deps.store.read((tx) => readVectorPage(tx, page));
    for (const row of rows) {
      if (row.model !== model) continue;
      const s = score(row.embedding);
      if (s !== undefined && s > 0) best.push(s, { fileId: row.fileId, seq: Number(row.seq) });
    }
  }
  const ranked = best.sorted();
  const found = await deps.store.read((tx) => findChunkHits(tx, ranked.map((r) => r.item)));
  const byKey = new Map(found.map((h) => [chunkKey(h), h]));
  return ranked.flatMap((r) => byKey.get(chunkKey(r.item)) ?? []);
}

/**
 * Pages of about `rows` chunks: small files together, a large one in ranges of its chunks. A file
 * that grew since it was counted (its text read again) only makes its page a little longer.
 */
export function* planPages(files: { fileId: string; chunks: number }[], rows: number): Generator<{ fileIds: string[] } | { fileId: string; fromSeq: number; toSeq: number }> {
  let group: string[] = [];
  let size = 0;
  for (const f of files) {
    if (f.chunks > rows) {
      for (let from = 0; from < f.chunks; from += rows) yield { fileId: f.fileId, fromSeq: from, toSeq: from + rows >= f.chunks ? Number.MAX_SAFE_INTEGER : from + rows };
      continue;
    }
    if (size + f.chunks > rows) {
      yield { fileIds: group };
      group = [];
      size = 0;
    }
    group.push(f.fileId);
    size += f.chunks;
  }
  if (group.length) yield { fileIds: group };
}

const chunkKey = (k: ChunkKey) => `${k.fileId}:${Number(k.seq)}`;

/**
 * Reciprocal rank fusion: each list gives a chunk 1 / (60 + its rank); the sums rank the fused
 * list. Scores of different kinds (bm25, ts_rank, cosine) need not be comparable for it, and a
 * chunk both lists found rises above one only either found.
 */
export function fuseRankings(lists: ChunkHit[][], limit: number): ChunkHit[] {
  const fused = new Map<string, { hit: ChunkHit; score: number }>();
  for (const list of lists)
    list.forEach((hit, rank) => {
      const key = chunkKey(hit);
      const entry = fused.get(key) ?? { hit, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(key, entry);
    });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((e) => e.hit);
}
