import type { Config } from '../config';
import type { AppDeps } from '../deps';
import { releaseLease, tryAcquireLease } from '../tasks/lease.store';
import { EmbeddingsError } from './embeddings-client';
import { currentModelLabel, embedLabelled } from './embeddings-model';
import { listChunksToEmbed, listUncodedVectors, saveCodes, saveEmbeddings, type ChunkToEmbed } from './embeddings.store';
import { decodeVector, encodeSignBits, encodeVector } from './embeddings-vectors';
import type { CallUsage } from '../ai/ai.types';
import { serviceModelOf } from '../connections/adapters';
import { uncheckedReservation } from '../usage/usage.types';

type Deps = Pick<AppDeps, 'config' | 'store' | 'log' | 'now' | 'instanceId' | 'lifecycle' | 'connections' | 'usage'>;

/**
 * Chunks one pass embeds at most: the queue reads waiting documents between passes, so a
 * backlog (a model changed, embeddings turned on for a full library) never holds up new uploads
 * for long.
 */
export const FILL_PER_PASS = 2000;
/** Vectors stored without their codes that one pass codes, and one transaction (a write of ~10 KB rows on SQLite). */
const CODES_PER_PASS = 20_000;
const CODES_PER_WRITE = 250;
/** Longer than a pass normally takes: only a dead instance's pass is taken over. */
const LEASE_MS = 10 * 60_000;
const FILL_LEASE = 'file-embeddings';

/** How a pass ended: `more` chunks are left for the next pass; `failed` stops the queue's passes until its next wake. */
export type FillResult = { embedded: number; refused: number; more: boolean; failed: boolean };

/**
 * Embed chunks that have no vector of the configured model (docs/files.md, "Semantic search"),
 * a batch (`PARLEY_EMBEDDINGS_BATCH`) a request, at most FILL_PER_PASS; of one file when given
 * (right after its text is saved), else of any file, under a lease so that the instances of a
 * cluster do not pay twice for the same chunks. A failure ends the pass and is logged: the
 * chunks stay without vectors, full-text search finds them, and a later pass tries again.
 */
export async function fillEmbeddings(deps: Deps, fileId?: string): Promise<FillResult> {
  const result: FillResult = { embedded: 0, refused: 0, more: false, failed: false };
  const embeddings = await deps.connections.embeddings();
  if (!embeddings) return result;
  if (!fileId && !(await deps.store.write((tx) => tryAcquireLease(tx, FILL_LEASE, deps.instanceId, LEASE_MS, deps.now())))) return result;
  let model = await currentModelLabel(deps, embeddings);
  const batch = embeddings.embeddingsBatch;
  try {
    if (!fileId && (await fillCodes(deps)).more) {
      result.more = true;
      return result;
    }
    while (!deps.lifecycle.signal.aborted) {
      if (result.embedded + result.refused >= FILL_PER_PASS) {
        result.more = true;
        break;
      }
      const chunks = await deps.store.read((tx) => listChunksToEmbed(tx, model, batch, fileId));
      if (!chunks.length) break;
      const saved = await embedBatch(deps, embeddings, chunks);
      result.embedded += saved.embedded;
      result.refused += saved.refused;
      // The model's fingerprint was checked along: another model under its name has a label of its own.
      model = saved.model;
    }
  } catch (err) {
    result.failed = true;
    if (!(err instanceof EmbeddingsError)) throw err;
    if (!deps.lifecycle.signal.aborted)
      deps.log.warn('embedding document chunks failed', { model, ...(fileId ? { fileId } : {}), error: err.message, ...(err.detail ? { upstream: err.detail } : {}) });
  } finally {
    if (!fileId) await deps.store.write((tx) => releaseLease(tx, FILL_LEASE, deps.instanceId)).catch(() => undefined);
  }
  return result;
}

/**
 * The sign bits of vectors stored before codes were kept (docs/files.md, "How a search reads the
 * vectors"), CODES_PER_PASS at most: no embeddings server is asked, the codes come from the
 * stored floats. Until a document's chunks all have theirs, a search reads its vectors instead.
 */
async function fillCodes(deps: Deps): Promise<{ coded: number; more: boolean }> {
  let coded = 0;
  while (!deps.lifecycle.signal.aborted) {
    if (coded >= CODES_PER_PASS) return { coded, more: true };
    const rows = await deps.store.read((tx) => listUncodedVectors(tx, CODES_PER_WRITE));
    if (!rows.length) break;
    await deps.store.write((tx) => saveCodes(tx, rows.map((r) => ({ id: r.id, code: encodeSignBits(decodeVector(r.embedding)) }))));
    coded += rows.length;
    // Each write holds SQLite's one writer: requests waiting to write go between two.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { coded, more: false };
}

/** A vector as stored: its floats, and its sign bits for the search index. */
const stored = (v: Float32Array) => ({ embedding: encodeVector(v), code: encodeSignBits(v) });

/**
 * One request for the batch; when the server refuses it for its text, one request a chunk, and
 * those it still refuses are recorded as refused by this model. If it refuses every one of them,
 * the fault is the request's (a `dimensions` the model lacks, a model that does not embed), not
 * the texts': nothing is recorded and the pass stops.
 */
async function embedBatch(deps: Deps, embeddings: Config, chunks: ChunkToEmbed[]): Promise<{ embedded: number; refused: number; model: string }> {
  try {
    const { vectors, label } = await embedLabelled(deps, embeddings, chunks.map((c) => c.content), { signal: deps.lifecycle.signal, onUsage: (u) => recordEmbedding(deps, embeddings, chunks, u) });
    await deps.store.write((tx) => saveEmbeddings(tx, label, chunks.map((c, i) => ({ id: c.id, fileId: c.fileId, ...stored(vectors[i]!) }))));
    return { embedded: chunks.length, refused: 0, model: label };
  } catch (err) {
    if (!(err instanceof EmbeddingsError && err.refused)) throw err;
  }
  const rows: { id: string; fileId: string; embedding: string | null; code: string | null }[] = [];
  let lastRefusal: EmbeddingsError | undefined;
  let model = await currentModelLabel(deps, embeddings);
  for (const chunk of chunks) {
    try {
      const { vectors, label } = await embedLabelled(deps, embeddings, [chunk.content], { signal: deps.lifecycle.signal, onUsage: (u) => recordEmbedding(deps, embeddings, [chunk], u) });
      model = label;
      rows.push({ id: chunk.id, fileId: chunk.fileId, ...stored(vectors[0]!) });
    } catch (err) {
      if (!(err instanceof EmbeddingsError && err.refused)) throw err;
      lastRefusal = err;
      rows.push({ id: chunk.id, fileId: chunk.fileId, embedding: null, code: null });
    }
  }
  if (rows.every((r) => r.embedding === null)) throw lastRefusal!;
  await deps.store.write((tx) => saveEmbeddings(tx, model, rows));
  const refused = rows.filter((r) => r.embedding === null).length;
  deps.log.warn('embeddings server refused document chunks', { model, chunks: refused, upstream: lastRefusal?.detail });
  return { embedded: rows.length - refused, refused, model };
}

/**
 * An embeddings request's usage, the documents' owners' (docs/usage.md): a batch holding several
 * users' chunks is shared by their characters (each share then marked estimated; the sum is what
 * the server reported). Embeddings are recorded, never refused: they index what users uploaded.
 */
function recordEmbedding(deps: Deps, embeddings: Config, chunks: ChunkToEmbed[], usage: CallUsage): void {
  const service = serviceModelOf(embeddings, 'embeddings');
  const chars = new Map<string, number>();
  for (const c of chunks) chars.set(c.userId, (chars.get(c.userId) ?? 0) + c.content.length + 1);
  const total = [...chars.values()].reduce((a, b) => a + b, 0);
  let left = usage.inputTokens;
  [...chars].forEach(([userId, n], i) => {
    const last = i === chars.size - 1;
    const tokens = last ? left : Math.round((usage.inputTokens * n) / total);
    left -= tokens;
    const report = { ...service, inputTokens: tokens, estimated: usage.estimated || chars.size > 1 };
    void deps.usage.settle(uncheckedReservation(deps.usage, { userId }, 'embeddings'), report).catch((err) =>
      deps.log.error('usage could not be recorded', { kind: 'embeddings', userId, cause: err instanceof Error ? err.message : String(err) }),
    );
  });
}
