import { codeWords, writeSignBits } from './embeddings-vectors';
import { MAX_CHUNKS, MAX_WORDS, releaseHammingKernel, takeHammingKernel, type HammingKernel } from './hamming-wasm';
import type { ChunkKey } from './embeddings.store';

/** Chunks nearest by Hamming distance that are scored against the query's floats, per candidate kept. */
const WIDEN = 8;
/** Chunks compared between two looks at the clock. */
const SLICE_CHUNKS = MAX_CHUNKS; // 4,096: what the kernel takes at once
/**
 * How long a scan holds the thread before it lets other requests in: a million chunks take
 * 100–200 ms of comparisons, which would otherwise stall every other request for that long.
 */
export const SCAN_SLICE_MS = 4;

/**
 * Set bits of each 16-bit number: two lookups count a word's, about 1.5 times as fast as the
 * arithmetic count (JavaScript has no popcount), measured over 100,000 codes of 12 and 48 words.
 * Only for codes too long for the WebAssembly kernel (src/files/hamming-wasm.ts), which counts
 * with `i64.popcnt`.
 */
const BITS16 = (() => {
  const t = new Uint8Array(65536);
  for (let i = 1; i < 65536; i++) t[i] = (i & 1) + t[i >> 1]!;
  return t;
})();

/**
 * The `depth` likeliest nearest chunks to `query`, from codes given a document (or a part of
 * one) at a time: the candidates whose exact vectors are then read and scored. Two steps, both
 * on the bits alone:
 * 1. `add`: the `depth × WIDEN` chunks whose bits differ least from the query's (Hamming
 *    distance), in a max-heap with the farthest at its root, so a chunk costs one comparison
 *    unless it is nearer; each kept chunk's code is copied into a slot of the heap's own, so the
 *    codes given need not outlive the call (a page read from the database, a document over the
 *    index's cap);
 * 2. `best`: those scored against the query's floats rather than its bits (each set bit counts
 *    +q[i], each clear one −q[i], summed 4 bits at a time from tables of the 16 values of each
 *    nibble): an estimate of the dot product that keeps the query's precision, so it ranks the
 *    close calls of step 1 better; the best `depth` of them are the candidates.
 * Measured (bench/vector-candidates.ts): at 250,000 chunks, step 1 alone to 100 candidates found
 * 0.87 of the exact top 10.
 *
 * `add` gives the thread up (a macrotask) whenever the scan has held it for `sliceMs`, so a long
 * scan never stalls other requests for longer than that.
 */
export class NearestCodes {
  private readonly words: number;
  private readonly code: Int32Array;
  private readonly wide: number;
  /** The heap: distance and slot at each position. */
  private readonly dist: Int32Array;
  private readonly slot: Int32Array;
  /** Each slot's chunk: its document (an index into `files`), number and code. */
  private readonly slotFile: Int32Array;
  private readonly slotSeq: Int32Array;
  private readonly slotCode: Int32Array;
  private readonly files: string[] = [];
  private size = 0;
  private heldSince = performance.now();
  /** The distances counted in WebAssembly (codes up to `MAX_WORDS` words: 4,288 dimensions). */
  private kernel: HammingKernel | undefined;

  constructor(
    private readonly query: Float32Array,
    private readonly depth: number,
    private readonly sliceMs = SCAN_SLICE_MS,
  ) {
    this.words = codeWords(query.length);
    this.code = new Int32Array(this.words);
    writeSignBits(query, this.code, 0);
    this.wide = depth * WIDEN;
    this.dist = new Int32Array(this.wide);
    this.slot = new Int32Array(this.wide);
    this.slotFile = new Int32Array(this.wide);
    this.slotSeq = new Int32Array(this.wide);
    this.slotCode = new Int32Array(this.wide * this.words);
    this.kernel = this.words <= MAX_WORDS ? takeHammingKernel() : undefined;
    this.kernel?.query.set(this.code);
  }

  /** Compare chunks `from` to `to` of a document (`codes`: `words` a chunk, `seqs`: their numbers). */
  async add(fileId: string, codes: Int32Array, seqs: Int32Array, from = 0, to = seqs.length): Promise<void> {
    if (from >= to) return;
    const file = this.files.push(fileId) - 1;
    for (let start = from; start < to; start += SLICE_CHUNKS) {
      const end = Math.min(to, start + SLICE_CHUNKS);
      if (this.kernel) this.compareInKernel(this.kernel, file, codes, seqs, start, end);
      else this.compare(file, codes, seqs, start, end);
      if (performance.now() - this.heldSince >= this.sliceMs) {
        await new Promise((resolve) => setImmediate(resolve));
        this.heldSince = performance.now();
      }
    }
  }

  /** `compare`, the distances counted by the kernel on a copy of the slice's codes (a memcpy: ~1/10 of the counting it saves). */
  private compareInKernel(kernel: HammingKernel, file: number, codes: Int32Array, seqs: Int32Array, from: number, to: number): void {
    const { words, wide, dist } = this;
    kernel.codes.set(codes.subarray(from * words, to * words));
    kernel.distances(to - from, words);
    const out = kernel.out;
    for (let c = from, at = from * words; c < to; c++, at += words) {
      const h = out[c - from]!;
      if (this.size < wide) this.push(h, file, seqs[c]!, codes, at);
      else if (h < dist[0]!) this.replaceRoot(h, file, seqs[c]!, codes, at);
    }
  }

  private compare(file: number, codes: Int32Array, seqs: Int32Array, from: number, to: number): void {
    const { words, code, wide, dist } = this;
    for (let c = from, at = from * words; c < to; c++, at += words) {
      let h = 0;
      for (let w = 0; w < words; w++) {
        const x = codes[at + w]! ^ code[w]!;
        h += BITS16[x & 0xffff]! + BITS16[x >>> 16]!;
      }
      if (this.size < wide) this.push(h, file, seqs[c]!, codes, at);
      else if (h < dist[0]!) this.replaceRoot(h, file, seqs[c]!, codes, at);
    }
  }

  private keep(s: number, file: number, seq: number, codes: Int32Array, at: number): void {
    this.slotFile[s] = file;
    this.slotSeq[s] = seq;
    const { words, slotCode } = this;
    for (let w = 0, to = s * words; w < words; w++) slotCode[to + w] = codes[at + w]!;
  }

  private push(h: number, file: number, seq: number, codes: Int32Array, at: number): void {
    const { dist, slot } = this;
    const s = this.size++;
    this.keep(s, file, seq, codes, at);
    let i = s;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (dist[parent]! >= h) break;
      dist[i] = dist[parent]!;
      slot[i] = slot[parent]!;
      i = parent;
    }
    dist[i] = h;
    slot[i] = s;
  }

  private replaceRoot(h: number, file: number, seq: number, codes: Int32Array, at: number): void {
    const { dist, slot, size } = this;
    const s = slot[0]!;
    this.keep(s, file, seq, codes, at);
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let most = -1;
      let far = h;
      if (l < size && dist[l]! > far) {
        most = l;
        far = dist[l]!;
      }
      if (r < size && dist[r]! > far) most = r;
      if (most < 0) break;
      dist[i] = dist[most]!;
      slot[i] = slot[most]!;
      i = most;
    }
    dist[i] = h;
    slot[i] = s;
  }

  /** The candidates, likeliest first; the scan is over (the kernel goes back for the next search). */
  best(): ChunkKey[] {
    if (this.kernel) releaseHammingKernel(this.kernel);
    this.kernel = undefined;
    const tables = nibbleTables(this.query);
    const scored: { score: number; key: ChunkKey }[] = [];
    for (let s = 0; s < this.size; s++) {
      let score = 0;
      for (let w = 0, at = s * this.words; w < this.words; w++) {
        const x = this.slotCode[at + w]!;
        // Nibble k of word w holds the signs of dimensions 32w + 4k to 32w + 4k + 3.
        for (let k = 0, t = w << 7; k < 8; k++, t += 16) score += tables[t | ((x >>> (4 * k)) & 15)]!;
      }
      scored.push({ score, key: { fileId: this.files[this.slotFile[s]!]!, seq: this.slotSeq[s]! } });
    }
    return scored
      .sort((a, b) => b.score - a.score)
      .slice(0, this.depth)
      .map((s) => s.key);
  }
}

/**
 * For each 4 bits of a code, the query's share of the dot product for each of their 16 values:
 * 16 floats a nibble, 24 KB at 1,536 dimensions (tables by byte were 196 KB of garbage a search,
 * and no faster over the few thousand codes scored).
 */
function nibbleTables(query: Float32Array): Float32Array {
  const nibbles = codeWords(query.length) * 8;
  const t = new Float32Array(nibbles * 16);
  for (let j = 0; j < nibbles; j++) {
    const q = (k: number) => (4 * j + k < query.length ? query[4 * j + k]! : 0);
    for (let v = 0; v < 16; v++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) sum += v & (1 << k) ? q(k) : -q(k);
      t[(j << 4) | v] = sum;
    }
  }
  return t;
}
