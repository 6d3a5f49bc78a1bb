/**
 * The Hamming distances of many codes to one, in WebAssembly: JavaScript has no bit count, and
 * counting a 32-bit word through a table (two lookups) was the floor of the scan in JavaScript;
 * WebAssembly's `i64.popcnt` is one instruction for two words. The module is 291 bytes, written
 * out below instruction by instruction (no toolchain needed to build it, nothing to load).
 *
 * `distances(n, words)`: for each of the `n` codes of `words` 32-bit words in `codes`, its
 * distance to the code in `query`, written to `out` as an int32 each.
 */

// The opcodes used, all of WebAssembly 1.0 (popcnt included: no feature to detect).
const BLOCK = 0x02;
const LOOP = 0x03;
const VOID = 0x40;
const END = 0x0b;
const BR = 0x0c;
const BR_IF = 0x0d;
const GET = 0x20;
const SET = 0x21;
const I32_LOAD = 0x28;
const I64_LOAD = 0x29;
const I32_STORE = 0x36;
const I32_CONST = 0x41;
const I32_GE_U = 0x4f;
const I32_ADD = 0x6a;
const I32_SHL = 0x74;
const I32_POPCNT = 0x69;
const I32_XOR = 0x73;
const I64_POPCNT = 0x7b;
const I64_XOR = 0x85;
const I32_WRAP_I64 = 0xa7;
const I32 = 0x7f;

/** Pages of 64 KiB: codes of a slice (4,096 chunks of up to 128 words = 2 MiB), the query, the distances. */
const PAGES = 34;
const QUERY_AT = 0;
const OUT_AT = 4096;
const CODES_AT = 4096 + 4 * 4096;
/** The most chunks and words one call may be given (the layout above). */
export const MAX_CHUNKS = 4096;
export const MAX_WORDS = Math.floor((PAGES * 65536 - CODES_AT) / 4 / MAX_CHUNKS);

/**
 * The function's body: `step` 4 (i32, a word at a time) or 8 (i64, two words at a time; only for
 * an even number of words, so that no load crosses into the next code).
 * Params: 0 n, 1 words. Locals: 2 c (chunk), 3 w (byte offset in the code), 4 h (distance),
 * 5 p (the chunk's code), 6 bytes (a code's bytes).
 */
function body(step: 4 | 8): number[] {
  const load = step === 8 ? [I64_LOAD, 3, 0] : [I32_LOAD, 2, 0];
  const count = step === 8 ? [I64_XOR, I64_POPCNT, I32_WRAP_I64] : [I32_XOR, I32_POPCNT];
  const code = [
    ...[I32_CONST, ...sleb(CODES_AT), SET, 5],
    ...[GET, 1, I32_CONST, 2, I32_SHL, SET, 6],
    ...[I32_CONST, 0, SET, 2],
    ...[BLOCK, VOID, LOOP, VOID],
    ...[GET, 2, GET, 0, I32_GE_U, BR_IF, 1],
    ...[I32_CONST, 0, SET, 4, I32_CONST, 0, SET, 3],
    ...[BLOCK, VOID, LOOP, VOID],
    ...[GET, 3, GET, 6, I32_GE_U, BR_IF, 1],
    ...[GET, 4],
    ...[GET, 5, GET, 3, I32_ADD, ...load],
    ...[GET, 3, I32_CONST, ...sleb(QUERY_AT), I32_ADD, ...load],
    ...count,
    ...[I32_ADD, SET, 4],
    ...[GET, 3, I32_CONST, step, I32_ADD, SET, 3],
    ...[BR, 0, END, END],
    ...[GET, 2, I32_CONST, 2, I32_SHL, I32_CONST, ...sleb(OUT_AT), I32_ADD, GET, 4, I32_STORE, 2, 0],
    ...[GET, 5, GET, 6, I32_ADD, SET, 5],
    ...[GET, 2, I32_CONST, 1, I32_ADD, SET, 2],
    ...[BR, 0, END, END],
    END,
  ];
  const locals = [1, 5, I32];
  return [...uleb(locals.length + code.length), ...locals, ...code];
}

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(byte & 0x40)) || (n === -1 && byte & 0x40)) return [...out, byte];
    out.push(byte | 0x80);
  }
}

const section = (id: number, content: number[]) => [id, ...uleb(content.length), ...content];
const name = (s: string) => [s.length, ...[...s].map((ch) => ch.charCodeAt(0))];

function moduleBytes(): Uint8Array {
  const b32 = body(4);
  const b64 = body(8);
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 2, I32, I32, 0]),
    ...section(3, [2, 0, 0]),
    ...section(5, [1, 0, ...uleb(PAGES)]),
    ...section(7, [3, ...name('memory'), 2, 0, ...name('d32'), 0, 0, ...name('d64'), 0, 1]),
    ...section(10, [2, ...b32, ...b64]),
  ]);
}

export interface HammingKernel {
  /** The query's words (write them before `distances`). */
  query: Int32Array;
  /** Where `distances` reads the codes: `MAX_CHUNKS × words` words. */
  codes: Int32Array;
  /** Where it writes their distances. */
  out: Int32Array;
  distances(n: number, words: number): void;
}

let compiled: WebAssembly.Module | undefined;
/**
 * Kernels no search holds, for the next ones: a new instance's first calls ran at a quarter of
 * the speed of a warm one's, and its memory cost up to 5 ms to map on this loaded machine
 * (measured: a scan of 100,000 × 1,536 with a kernel made per search was no faster than the
 * JavaScript count). At most `SPARE` are kept: 2 MiB each.
 */
const spare: HammingKernel[] = [];
const SPARE = 4;

/** A kernel for one search: its own memory while it holds it (searches interleave between slices). */
export function takeHammingKernel(): HammingKernel {
  const kept = spare.pop();
  if (kept) return kept;
  compiled ??= new WebAssembly.Module(moduleBytes());
  const exports = new WebAssembly.Instance(compiled).exports as { memory: WebAssembly.Memory; d32(n: number, words: number): void; d64(n: number, words: number): void };
  const buffer = exports.memory.buffer;
  return {
    query: new Int32Array(buffer, QUERY_AT, OUT_AT / 4),
    out: new Int32Array(buffer, OUT_AT, MAX_CHUNKS),
    codes: new Int32Array(buffer, CODES_AT, MAX_CHUNKS * MAX_WORDS),
    distances: (n, words) => (words % 2 ? exports.d32(n, words) : exports.d64(n, words)),
  };
}

/** The search is done with it (a search that failed half-way just leaves its kernel to the garbage collector). */
export function releaseHammingKernel(kernel: HammingKernel): void {
  if (spare.length < SPARE) spare.push(kernel);
}
