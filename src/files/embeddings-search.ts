import type { AppDeps } from '../deps';
import { AppError, notSetUp } from '../http/errors';
import { searchFileChunks, type ChunkHit } from './file-text.store';
import { EmbeddingsError } from './embeddings-client';
import { embedLabelled } from './embeddings-model';
import { listSearchableFiles, readChunkVectors, type ChunkKey } from './embeddings.store';
import { createScorer, TopK } from './embeddings-vectors';
import { candidateDepth, type FileCodes } from './embeddings-index';
import { NearestCodes } from './embeddings-nearest';
import { countCodes, readCodes, ROW_BYTES } from './embeddings-codes';
import { collectSoon } from '../http/collect-soon';
import { serviceModelOf } from '../connections/adapters';
import { uncheckedReservation } from '../usage/usage.types';

export type SearchMode = 'text' | 'semantic' | 'hybrid';

/** Candidates one statement reads back. */
const KEYS_PER_READ = 500;
/** A search's query is one short text: a server slower than this is failing, and text search answers instead. */
const QUERY_TIMEOUT_MS = 15_000;
/** How deep each list goes before the two are fused, and reciprocal rank fusion's constant (60, as in its paper). */
const FUSE_DEPTH = 50;
const RRF_K = 60;

/**
 * `apiKeyId`: the key the request came with, for usage by key (docs/usage.md). `alsoFileIds`:
 * documents searched besides the user's own and the conversation's (an assistant's knowledge).
 */
type SearchInput = { userId: string; conversationId?: string; alsoFileIds?: readonly string[]; query: string; limit: number; mode?: SearchMode; apiKeyId?: string };

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
  const byWords = (limit: number) => deps.store.read((tx) => searchFileChunks(tx, { userId: input.userId, query: input.query, conversationId: input.conversationId, alsoFileIds: input.alsoFileIds, limit }));
  // A blank query (a model's empty tool call) has no meaning to embed, and servers refuse it.
  if (mode === 'text' || !input.query.trim()) return { mode: 'text', hits: await byWords(input.limit) };
  if (!on) {
    if (mode === 'semantic')
      throw notSetUp('Semantic search is not set up on this server: its admin sets PARLEY_EMBEDDINGS_BASE_URL (see docs/files.md). Search with mode "text".');
    return { mode: 'text', hits: await byWords(input.limit) };
  }
  let vector: Float32Array;
  let model: string;
  try {
    const service = serviceModelOf(embeddings!, 'embeddings');
    const caller = { userId: input.userId, apiKeyId: input.apiKeyId };
    const embedded = await embedLabelled(deps, embeddings!, [input.query], {
      timeoutMs: QUERY_TIMEOUT_MS,
      onUsage: (u) => void deps.usage.settle(uncheckedReservation(deps.usage, caller, 'embeddings'), { ...service, ...u }).catch(() => undefined),
    });
    [vector, model] = [embedded.vectors[0]!, embedded.label];
    // Another model under the configured name: its chunks are embedded again now, not at the next upload.
    if (embedded.changed) deps.fileText.wake();
  } catch (err) {
    if (!(err instanceof EmbeddingsError)) throw err;
    deps.log.warn('embedding a search query failed', { error: err.message, ...(err.detail ? { upstream: err.detail } : {}) });
    if (mode === 'semantic') throw new AppError('BAD_GATEWAY', { message: err.message, cause: err });
    return { mode: 'text', hits: await byWords(input.limit) };
  }
  const scope = { userId: input.userId, conversationId: input.conversationId, alsoFileIds: input.alsoFileIds, model };
  if (mode === 'semantic') return { mode, hits: await searchByVector(deps, { ...scope, vector, limit: input.limit }) };
  const depth = Math.max(input.limit, FUSE_DEPTH);
  const words = await byWords(depth);
  const meaning = await searchByVector(deps, { ...scope, vector, limit: depth });
  return { mode, hits: fuseRankings([words, meaning], input.limit) };
}

/**
 * The chunks whose vectors are closest to `vector` (cosine similarity: both are of length 1, so
 * a dot product), among those labelled `model` (src/files/embeddings-model.ts) in documents the
 * user may read, which the database lists at every search (docs/files.md, "How a search reads
 * the vectors").
 *
 * The sign bits (codes) of each document's vectors are kept in memory (src/files/
 * embeddings-index.ts); those of documents not held are read from the database, their codes only
 * (src/files/embeddings-codes.ts). The chunks whose bits differ least from the query's are the
 * candidates (src/files/embeddings-nearest.ts), and only their vectors are read back, with what a
 * hit shows, and scored exactly: the order and the scores are exact. Chunks sharing nothing with
 * the query (similarity 0 or less) are left out.
 */
export async function searchByVector(
  deps: Pick<AppDeps, 'store' | 'embeddingsIndex' | 'log' | 'now'>,
  input: { userId: string; conversationId?: string; alsoFileIds?: readonly string[]; model: string; vector: Float32Array; limit: number },
): Promise<ChunkHit[]> {
  const { model, vector: query } = input;
  const files = await deps.store.read((tx) => listSearchableFiles(tx, { userId: input.userId, conversationId: input.conversationId, alsoFileIds: input.alsoFileIds }));
  const held: FileCodes[] = [];
  const missing: { fileId: string; version: number }[] = [];
  for (const f of files) {
    const codes = deps.embeddingsIndex.get(f.fileId, f.version, model, query.length);
    if (codes) held.push(codes);
    else missing.push(f);
  }
  const counts = missing.length ? await countCodes(deps, missing, model) : [];
  const chunks = held.reduce((n, doc) => n + doc.seqs.length, 0) + counts.reduce((n, c) => n + c.coded + c.uncoded, 0);
  const nearest = new NearestCodes(query, candidateDepth(chunks, input.limit));
  for (const doc of held) await nearest.add(doc.fileId, doc.codes, doc.seqs);
  if (missing.length) {
    const heldBytes = held.reduce((n, doc) => n + doc.bytes, 0);
    await readCodes(deps, { files: missing, counts, inUse: new Set(files.map((f) => f.fileId)), heldBytes, model, dims: query.length, nearest });
  }
  // In (file, seq) order, as the rows come: of two chunks scored alike, the earlier document's is kept.
  const candidates = nearest.best().sort(byKey);
  const best = new TopK<ChunkHit>(input.limit);
  const score = createScorer(query);
  let read = 0;
  for (let i = 0; i < candidates.length; i += KEYS_PER_READ) {
    const rows = await deps.store.read((tx) => readChunkVectors(tx, candidates.slice(i, i + KEYS_PER_READ)));
    for (const row of rows.sort(byKey)) {
      read += ROW_BYTES + row.embedding.length + row.content.length + row.filename.length;
      const s = row.model === model ? score(row.embedding) : undefined;
      if (s !== undefined && s > 0) best.push(s, { fileId: row.fileId, filename: row.filename, seq: row.seq, page: row.page, content: row.content });
    }
  }
  if (deps.embeddingsIndex.noteRead(read)) collectSoon();
  return best.sorted().map((r) => r.item);
}

const chunkKey = (k: ChunkKey) => `${k.fileId}:${Number(k.seq)}`;
const byKey = (a: ChunkKey, b: ChunkKey) => (a.fileId < b.fileId ? -1 : a.fileId > b.fileId ? 1 : a.seq - b.seq);

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
