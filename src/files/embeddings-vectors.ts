/**
 * Vectors as stored in `file_chunks.embedding` (docs/files.md, "Semantic search"): float32,
 * little-endian, in base64 (bytea on PostgreSQL, src/db/vector-column.ts), scaled to length 1 when stored so that cosine similarity is a plain
 * dot product at search time.
 */

/** `v` scaled to length 1 (a zero vector stays zero: it matches nothing). */
export function normaliseVector(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  if (!norm) return v;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

export function encodeVector(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

export function decodeVector(stored: StoredVector): Float32Array {
  const bytes = typeof stored === 'string' ? Buffer.from(stored, 'base64') : stored;
  // A copy: Buffer.from may hand back a slice of a shared pool, not aligned for float32.
  return new Float32Array(new Uint8Array(bytes).buffer);
}

/** A stored vector as a statement returns it: base64 text, or its bytes (PostgreSQL's bytea, src/db/vector-column.ts). */
export type StoredVector = string | Uint8Array;

/**
 * Decodes stored vectors of `dims` floats, each into the same scratch buffer, so a scan of
 * 100,000 vectors allocates nothing per row; a vector of another length (a model that changed
 * under the same name) decodes to undefined. The view is overwritten by the next call.
 */
export function createDecoder(dims: number): (stored: StoredVector) => Float32Array | undefined {
  const encodedLength = Math.ceil((dims * 4) / 3) * 4;
  const scratch = Buffer.alloc(dims * 4);
  const view = new Float32Array(scratch.buffer, scratch.byteOffset, dims);
  return (stored) => {
    if (typeof stored === 'string') return stored.length === encodedLength && scratch.write(stored, 'base64') === dims * 4 ? view : undefined;
    if (stored.byteLength !== dims * 4) return undefined;
    // Copied: the driver's bytes need not be aligned for float32.
    scratch.set(stored);
    return view;
  };
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Scores stored vectors against one query vector (`createDecoder`: undefined for another length). */
export function createScorer(query: Float32Array): (stored: StoredVector) => number | undefined {
  const decode = createDecoder(query.length);
  return (stored) => {
    const v = decode(stored);
    return v && dot(query, v);
  };
}

/** 32-bit words that hold one sign bit a dimension. */
export const codeWords = (dims: number): number => (dims + 31) >>> 5;

/**
 * A vector's sign bits (bit i set when v[i] > 0), written at `out[at…]`: what the search index
 * keeps of each vector, 1/32 of its floats. The fraction of bits two codes differ in estimates
 * the angle between their vectors (angle / π), so the nearest codes hold the nearest vectors.
 */
export function writeSignBits(v: Float32Array, out: Int32Array, at: number): void {
  const words = codeWords(v.length);
  for (let w = 0; w < words; w++) {
    let bits = 0;
    const end = Math.min(32, v.length - w * 32);
    for (let b = 0; b < end; b++) if (v[w * 32 + b]! > 0) bits |= 1 << b;
    out[at + w] = bits;
  }
}

/**
 * A vector's sign bits as stored in `file_chunks.embedding_code`: base64 of `codeWords(dims)`
 * little-endian words, so that byte j holds the signs of dimensions 8j to 8j + 7 (bit 0 the first).
 */
export function encodeSignBits(v: Float32Array): string {
  const code = new Int32Array(codeWords(v.length));
  writeSignBits(v, code, 0);
  return Buffer.from(code.buffer).toString('base64');
}

/**
 * Reads stored codes of `words` words into `out` at word `at`, through one scratch buffer (a scan
 * allocates nothing per row); false, and nothing written, for a code of another length.
 */
export function createCodeReader(words: number): (base64: string, out: Int32Array, at: number) => boolean {
  const encodedLength = Math.ceil((words * 4) / 3) * 4;
  const scratch = Buffer.alloc(words * 4);
  const view = new Int32Array(scratch.buffer, scratch.byteOffset, words);
  return (base64, out, at) => {
    if (base64.length !== encodedLength || scratch.write(base64, 'base64') !== words * 4) return false;
    out.set(view, at);
    return true;
  };
}

/**
 * The `k` best items seen, in a min-heap: the worst kept is at the root, so each new item costs
 * one comparison unless it beats it (then log k). An equal score does not displace one kept.
 */
export class TopK<T> {
  private readonly scores: number[] = [];
  private readonly items: T[] = [];

  constructor(private readonly k: number) {}

  push(score: number, item: T): void {
    if (this.k <= 0) return;
    if (this.scores.length < this.k) {
      this.scores.push(score);
      this.items.push(item);
      this.up(this.scores.length - 1);
    } else if (score > this.scores[0]!) {
      this.scores[0] = score;
      this.items[0] = item;
      this.down(0);
    }
  }

  /** Best first. */
  sorted(): { score: number; item: T }[] {
    return this.scores.map((score, i) => ({ score, item: this.items[i]! })).sort((a, b) => b.score - a.score);
  }

  private swap(a: number, b: number): void {
    [this.scores[a], this.scores[b]] = [this.scores[b]!, this.scores[a]!];
    [this.items[a], this.items[b]] = [this.items[b]!, this.items[a]!];
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.scores[parent]! <= this.scores[i]!) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.scores.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < n && this.scores[l]! < this.scores[least]!) least = l;
      if (r < n && this.scores[r]! < this.scores[least]!) least = r;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }
}
