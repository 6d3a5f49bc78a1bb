import { codeWords, writeSignBits } from './embeddings-vectors';
import type { ChunkKey } from './embeddings.store';

/**
 * What a search keeps of one document's vectors between searches: each chunk's sign bits
 * (`codes`, `codeWords(dims)` words a chunk) and its `seq`. Kept for one `version` of the
 * document's vectors (`files.vectors_version`, bumped in the transaction that changes them), so
 * a version read from the database that differs means the codes are stale, whichever instance
 * changed them.
 */
export type FileCodes = { fileId: string; version: number; model: string; dims: number; codes: Int32Array; seqs: Int32Array; bytes: number };

/** Chunks nearest by Hamming distance that are scored against the query's floats, per candidate kept. */
const WIDEN = 8;

/** A Map entry, its key and the typed arrays' headers: what an entry costs beyond its arrays. */
const ENTRY_OVERHEAD = 200;

export const codesBytes = (fileId: string, chunks: number, dims: number): number => ENTRY_OVERHEAD + fileId.length * 2 + chunks * (codeWords(dims) + 1) * 4;

/**
 * The process's codes, least recently used first, within `PARLEY_EMBEDDINGS_INDEX_MB`
 * (docs/files.md, "Semantic search"). Nothing in it decides what a user may read: a search asks
 * the database which documents those are, and only looks their codes up here.
 */
export interface EmbeddingsIndex {
  readonly capBytes: number;
  /** Bytes held now. */
  bytes(): number;
  /** The codes of this version of the document's vectors of `model`, marked as just used. */
  get(fileId: string, version: number, model: string, dims: number): FileCodes | undefined;
  /**
   * Keep `entry`, making room by dropping the least recently used documents that are not in
   * `keep` (those the search at hand uses): false, and nothing kept, when it cannot fit.
   */
  put(entry: FileCodes, keep: ReadonlySet<string>): boolean;
}

export function createEmbeddingsIndex(capBytes: number): EmbeddingsIndex {
  const entries = new Map<string, FileCodes>();
  let held = 0;
  const drop = (fileId: string) => {
    const old = entries.get(fileId);
    if (!old) return;
    entries.delete(fileId);
    held -= old.bytes;
  };
  return {
    capBytes,
    bytes: () => held,
    get(fileId, version, model, dims) {
      const entry = entries.get(fileId);
      if (!entry) return undefined;
      if (entry.version !== version || entry.model !== model || entry.dims !== dims) {
        drop(fileId);
        return undefined;
      }
      // Map keeps insertion order: moved to the end, it is the most recently used.
      entries.delete(fileId);
      entries.set(fileId, entry);
      return entry;
    },
    put(entry, keep) {
      drop(entry.fileId);
      if (entry.bytes > capBytes) return false;
      for (const fileId of entries.keys()) {
        if (held + entry.bytes <= capBytes) break;
        if (!keep.has(fileId)) drop(fileId);
      }
      if (held + entry.bytes > capBytes) return false;
      entries.set(entry.fileId, entry);
      held += entry.bytes;
      return true;
    },
  };
}

/**
 * Candidates read back and scored exactly: 10 a hit asked, at least 100, and at least one in a
 * thousand of the chunks searched, since the more chunks, the more of them crowd near any query.
 * Measured against the exact scan (bench/file-search.ts, bench/vector-candidates.ts): a recall@10
 * of 0.98 to 1.0 at 100,000 chunks with 100; 0.92 at 250,000 with 100.
 */
export const candidateDepth = (chunks: number, limit: number): number => Math.max(100, limit * 10, Math.ceil(chunks / 1000));

/**
 * Set bits of each 16-bit number: two lookups count a word's, about 1.5 times as fast as the
 * arithmetic count (JavaScript has no popcount), measured over 100,000 codes of 12 and 48 words.
 */
const BITS16 = (() => {
  const t = new Uint8Array(65536);
  for (let i = 1; i < 65536; i++) t[i] = (i & 1) + t[i >> 1]!;
  return t;
})();

/**
 * The `depth` likeliest nearest chunks to `query` among the documents given: the candidates whose
 * exact vectors are then read and scored. Two steps, both on the bits alone:
 * 1. the `depth × WIDEN` chunks whose bits differ least from the query's (Hamming distance), in a
 *    max-heap with the farthest at its root, so a chunk costs one comparison unless it is nearer;
 * 2. those scored against the query's floats rather than its bits (each set bit counts +q[i],
 *    each clear one −q[i], summed a byte at a time from tables of the 256 values of each byte):
 *    an estimate of the dot product that keeps the query's precision, so it ranks the close
 *    calls of step 1 better; the best `depth` of them are the candidates.
 * Measured (bench/vector-candidates.ts): at 250,000 chunks, step 1 alone to 100 candidates found
 * 0.87 of the exact top 10.
 */
export function nearestCodes(docs: FileCodes[], query: Float32Array, depth: number): ChunkKey[] {
  const words = codeWords(query.length);
  const code = new Int32Array(words);
  writeSignBits(query, code, 0);
  const wide = depth * WIDEN;
  const dist = new Int32Array(wide);
  const doc = new Int32Array(wide);
  const pos = new Int32Array(wide);
  let size = 0;
  const swap = (a: number, b: number) => {
    let t = dist[a]!;
    dist[a] = dist[b]!;
    dist[b] = t;
    t = doc[a]!;
    doc[a] = doc[b]!;
    doc[b] = t;
    t = pos[a]!;
    pos[a] = pos[b]!;
    pos[b] = t;
  };
  const siftDown = () => {
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let most = i;
      if (l < size && dist[l]! > dist[most]!) most = l;
      if (r < size && dist[r]! > dist[most]!) most = r;
      if (most === i) return;
      swap(i, most);
      i = most;
    }
  };
  for (let d = 0; d < docs.length; d++) {
    const codes = docs[d]!.codes;
    const chunks = docs[d]!.seqs.length;
    for (let c = 0, at = 0; c < chunks; c++, at += words) {
      let h = 0;
      for (let w = 0; w < words; w++) {
        const x = codes[at + w]! ^ code[w]!;
        h += BITS16[x & 0xffff]! + BITS16[x >>> 16]!;
      }
      if (size < wide) {
        let i = size++;
        dist[i] = h;
        doc[i] = d;
        pos[i] = c;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (dist[parent]! >= dist[i]!) break;
          swap(i, parent);
          i = parent;
        }
      } else if (h < dist[0]!) {
        dist[0] = h;
        doc[0] = d;
        pos[0] = c;
        siftDown();
      }
    }
  }
  const tables = byteTables(query);
  const bytesPerCode = words * 4;
  const scored: { score: number; key: ChunkKey }[] = [];
  for (let i = 0; i < size; i++) {
    const entry = docs[doc[i]!]!;
    // Little-endian: byte j of a code holds the signs of dimensions 8j to 8j + 7.
    const bytes = new Uint8Array(entry.codes.buffer, entry.codes.byteOffset + pos[i]! * bytesPerCode, bytesPerCode);
    let score = 0;
    for (let j = 0; j < bytesPerCode; j++) score += tables[(j << 8) | bytes[j]!]!;
    scored.push({ score, key: { fileId: entry.fileId, seq: entry.seqs[pos[i]!]! } });
  }
  return scored
    .sort((a, b) => b.score - a.score)
    .slice(0, depth)
    .map((s) => s.key);
}

/** For each byte of a code, the query's share of the dot product for each of its 256 values. */
function byteTables(query: Float32Array): Float32Array {
  const bytes = codeWords(query.length) * 4;
  const t = new Float32Array(bytes * 256);
  for (let j = 0; j < bytes; j++) {
    const q = (k: number) => (8 * j + k < query.length ? query[8 * j + k]! : 0);
    let none = 0;
    for (let k = 0; k < 8; k++) none -= q(k);
    t[j << 8] = none;
    // A value is the one without its lowest set bit, with that dimension's sign turned to +.
    for (let b = 1; b < 256; b++) {
      const low = 31 - Math.clz32(b & -b);
      t[(j << 8) | b] = t[(j << 8) | (b & (b - 1))]! + 2 * q(low);
    }
  }
  return t;
}
