import type { AppDeps } from '../deps';
import { AppError, notSetUp } from '../http/errors';
import { searchFileChunks, type ChunkHit } from './file-text.store';
import { embeddingModelKey, EmbeddingsError, embedTexts } from './embeddings-client';
import { countChunks, findChunkHits, listSearchableFiles, readChunkVectors, readVectorPage, type ChunkKey } from './embeddings.store';
import { codeWords, createDecoder, createScorer, dot, TopK, writeSignBits } from './embeddings-vectors';
import { candidateDepth, codesBytes, nearestCodes, type FileCodes } from './embeddings-index';
import { serviceModelOf } from '../connections/adapters';
import { uncheckedReservation } from '../usage/usage.types';

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
/** Documents whose chunks one statement counts (SQLite binds at most 32,766 values). */
const FILES_PER_COUNT = 1000;
/** Candidates one statement reads back. */
const KEYS_PER_READ = 500;
/** A search's query is one short text: a server slower than this is failing, and text search answers instead. */
const QUERY_TIMEOUT_MS = 15_000;
/** How deep each list goes before the two are fused, and reciprocal rank fusion's constant (60, as in its paper). */
const FUSE_DEPTH = 50;
const RRF_K = 60;

/** `apiKeyId`: the key the request came with, for usage by key (docs/usage.md). */
type SearchInput = { userId: string; conversationId?: string; query: string; limit: number; mode?: SearchMode; apiKeyId?: string };

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
    const service = serviceModelOf(embeddings!, 'embeddings');
    const caller = { userId: input.userId, apiKeyId: input.apiKeyId };
    [vector] = (await embedTexts(embeddings!, [input.query], {
      timeoutMs: QUERY_TIMEOUT_MS,
      onUsage: (u) => void deps.usage.settle(uncheckedReservation(deps.usage, caller, 'embeddings'), { ...service, ...u }).catch(() => undefined),
    })) as [Float32Array];
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
 * a dot product), among those of the configured model in documents the user may read, which the
 * database lists at every search (docs/files.md, "How a search reads the vectors").
 *
 * The sign bits of each document's vectors are kept in memory (src/files/embeddings-index.ts):
 * the chunks whose bits differ least from the query's are the candidates, and only their vectors
 * are read back and scored exactly. Documents whose bits are not held (new, changed since, or
 * over `PARLEY_EMBEDDINGS_INDEX_MB`) have every vector read a page at a time and scored exactly,
 * their bits kept for the next search when they fit. Chunks sharing nothing with the query
 * (similarity 0 or less) are left out.
 */
export async function searchByVector(
  deps: Pick<AppDeps, 'store' | 'embeddingsIndex'>,
  input: { userId: string; conversationId?: string; vector: Float32Array; limit: number; model: string },
): Promise<ChunkHit[]> {
  const model = input.model;
  const query = input.vector;
  const best = new TopK<ChunkKey>(input.limit);
  const keep = (score: number | undefined, fileId: string, seq: number) => {
    if (score !== undefined && score > 0) best.push(score, { fileId, seq });
  };
  const files = await deps.store.read((tx) => listSearchableFiles(tx, { userId: input.userId, conversationId: input.conversationId }));
  const held: FileCodes[] = [];
  const missing: { fileId: string; version: number }[] = [];
  for (const f of files) {
    const codes = deps.embeddingsIndex.get(f.fileId, f.version, model, query.length);
    if (codes) held.push(codes);
    else missing.push(f);
  }
  if (missing.length) await scanAndIndex(deps, { files: missing, inUse: new Set(files.map((f) => f.fileId)), model, query, keep });
  const read = new Map<string, ChunkHit>();
  if (held.length) {
    const chunks = held.reduce((n, doc) => n + doc.seqs.length, 0);
    const candidates = nearestCodes(held, query, candidateDepth(chunks, input.limit));
    const score = createScorer(query);
    for (let i = 0; i < candidates.length; i += KEYS_PER_READ) {
      const rows = await deps.store.read((tx) => readChunkVectors(tx, candidates.slice(i, i + KEYS_PER_READ)));
      for (const row of rows) {
        if (row.model !== model) continue;
        keep(score(row.embedding), row.fileId, Number(row.seq));
        read.set(chunkKey(row), { fileId: row.fileId, filename: row.filename, seq: row.seq, page: row.page, content: row.content });
      }
    }
  }
  const ranked = best.sorted();
  // Hits among the candidates came with their text; those of documents read whole did not.
  const unread = ranked.map((r) => r.item).filter((k) => !read.has(chunkKey(k)));
  for (const hit of unread.length ? await deps.store.read((tx) => findChunkHits(tx, unread)) : []) read.set(chunkKey(hit), hit);
  return ranked.flatMap((r) => read.get(chunkKey(r.item)) ?? []);
}

/**
 * Every vector of `files` read, a page at a time, and scored exactly; each document's sign bits
 * built on the way and offered to the index once its last page is read (the index keeps them if
 * they fit without dropping a document this search uses). Memory stays at a page and the bits of
 * the documents in it, whatever the library's size, and other requests run between pages.
 */
async function scanAndIndex(
  deps: Pick<AppDeps, 'store' | 'embeddingsIndex'>,
  input: { files: { fileId: string; version: number }[]; inUse: ReadonlySet<string>; model: string; query: Float32Array; keep: (score: number | undefined, fileId: string, seq: number) => void },
): Promise<void> {
  const { model, query } = input;
  const dims = query.length;
  const words = codeWords(dims);
  const decode = createDecoder(dims);
  const pageRows = Math.max(100, Math.min(MAX_PAGE_ROWS, Math.floor(PAGE_CHARS / (Math.ceil((dims * 4) / 3) * 4))));
  const version = new Map(input.files.map((f) => [f.fileId, f.version]));
  const offer = (fileId: string, codes: Int32Array, seqs: Int32Array) =>
    deps.embeddingsIndex.put({ fileId, version: version.get(fileId)!, model, dims, codes, seqs, bytes: codesBytes(fileId, seqs.length, dims) }, input.inUse);
  for (let i = 0; i < input.files.length; i += FILES_PER_COUNT) {
    const ids = input.files.slice(i, i + FILES_PER_COUNT).map((f) => f.fileId);
    const counts = await deps.store.read((tx) => countChunks(tx, ids));
    const chunks = new Map(counts.map((c) => [c.fileId, c.chunks]));
    // A document without chunks (an empty text, a failed one) is held too, so it is not counted again.
    for (const id of ids) if (!chunks.has(id)) offer(id, new Int32Array(0), new Int32Array(0));
    const building = new Map<string, { codes: Int32Array; seqs: Int32Array; n: number; whole: boolean }>();
    for (const page of planPages(counts, pageRows)) {
      // SQLite answers at once, and awaiting a settled promise lets no other request in: a scan of
      // seconds would hold the whole server. Between pages, whatever waits runs first.
      await new Promise((resolve) => setImmediate(resolve));
      const rows = await deps.store.read((tx) => readVectorPage(tx, page));
      for (const row of rows) {
        if (row.model !== model) continue;
        const v = decode(row.embedding);
        if (!v) continue;
        const seq = Number(row.seq);
        input.keep(dot(query, v), row.fileId, seq);
        let b = building.get(row.fileId);
        if (!b) {
          const n = chunks.get(row.fileId) ?? 0;
          b = { codes: new Int32Array(n * words), seqs: new Int32Array(n), n: 0, whole: true };
          building.set(row.fileId, b);
        }
        // More chunks than counted: the text was read again meanwhile, and its version moved on.
        if (b.n === b.seqs.length) b.whole = false;
        else {
          writeSignBits(v, b.codes, b.n * words);
          b.seqs[b.n++] = seq;
        }
      }
      const done = 'fileIds' in page ? page.fileIds : page.toSeq === Number.MAX_SAFE_INTEGER ? [page.fileId] : [];
      for (const id of done) {
        const b = building.get(id);
        building.delete(id);
        if (!b) offer(id, new Int32Array(0), new Int32Array(0));
        // Every chunk counted had a vector (the usual case): the arrays are kept as they are, not copied.
        else if (b.whole) offer(id, b.n === b.seqs.length ? b.codes : b.codes.slice(0, b.n * words), b.n === b.seqs.length ? b.seqs : b.seqs.slice(0, b.n));
      }
    }
  }
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
