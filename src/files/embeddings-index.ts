import { codeWords } from './embeddings-vectors';

/**
 * What a search keeps of one document's vectors between searches: each chunk's sign bits
 * (`codes`, `codeWords(dims)` words a chunk) and its `seq`. Kept for one `version` of the
 * document's vectors (`files.vectors_version`, bumped in the transaction that changes them), so
 * a version read from the database that differs means the codes are stale, whichever instance
 * changed them.
 */
export type FileCodes = { fileId: string; version: number; model: string; dims: number; codes: Int32Array; seqs: Int32Array; bytes: number };

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
  /**
   * A search met documents whose codes did not fit (`bytes`: theirs and the held ones it used):
   * they are read from the database at every search. True the first time in the process, so
   * that it is logged once; `state().over` keeps the latest for the doctor.
   */
  noteOverCap(over: Omit<OverCap, 'at'>, at: number): boolean;
  state(): IndexState;
  /**
   * What a search read from the database (codes, candidates' vectors and text, the rows holding
   * them), in bytes: garbage once it answered, which the collector lets pile up (strings it does
   * not weigh by their size) well past the index itself. True when searches have read
   * COLLECT_AFTER_BYTES since the last time it said so: a collection is due
   * (src/http/collect-soon.ts).
   */
  noteRead(bytes: number): boolean;
}

/**
 * Measured at 100,000 chunks of 1,536 dimensions (bench/file-search.ts, 100 searches): each reads
 * ~1.2 MB, and the process peaked at 165 MB when left to the collector, at 150–157 MB with a
 * collection every 16 MB read, at 134–137 MB every 8 MB (a collection took ~3.5 ms, one every
 * six or seven searches); the first search after a start reads every code (30 MB at 1,536
 * dimensions) and is collected as it reads.
 */
const COLLECT_AFTER_BYTES = 8 * 2 ** 20;

export type OverCap = { documents: number; chunks: number; bytes: number; at: number };
export type IndexState = { capBytes: number; bytes: number; documents: number; chunks: number; over?: OverCap };

export function createEmbeddingsIndex(capBytes: number): EmbeddingsIndex {
  const entries = new Map<string, FileCodes>();
  let held = 0;
  let chunks = 0;
  let over: OverCap | undefined;
  let read = 0;
  const drop = (fileId: string) => {
    const old = entries.get(fileId);
    if (!old) return;
    entries.delete(fileId);
    held -= old.bytes;
    chunks -= old.seqs.length;
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
      chunks += entry.seqs.length;
      return true;
    },
    noteOverCap(o, at) {
      const first = !over;
      over = { ...o, at };
      return first;
    },
    noteRead(bytes) {
      read += bytes;
      if (read < COLLECT_AFTER_BYTES) return false;
      read = 0;
      return true;
    },
    state: () => ({ capBytes, bytes: held, documents: entries.size, chunks, ...(over ? { over } : {}) }),
  };
}

/**
 * Candidates read back and scored exactly: 10 a hit asked, at least 100, and at least one in a
 * thousand of the chunks searched, since the more chunks, the more of them crowd near any query.
 * Measured against the exact scan (bench/file-search.ts, bench/vector-candidates.ts): a recall@10
 * of 0.98 to 1.0 at 100,000 chunks with 100; 0.92 at 250,000 with 100.
 */
export const candidateDepth = (chunks: number, limit: number): number => Math.max(100, limit * 10, Math.ceil(chunks / 1000));
