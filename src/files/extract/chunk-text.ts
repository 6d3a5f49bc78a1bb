/**
 * Split a document's text into pieces of about `targetChars` for search and for a model's
 * context. A chunk ends at the strongest boundary in the last half of its window — a paragraph
 * break, else a line break, else a sentence's end, else a space, else (one unbroken run of
 * characters) exactly at the window's end — and the next chunk starts up to `overlapChars`
 * earlier, at a sentence's (else a word's) start, so a passage cut in two is whole in one of
 * them. Deterministic: the same text and options give the same chunks.
 *
 * `text.slice(start, end) === chunk.text` always, so a chunk can be shown in its place; chunks
 * carry no leading or trailing whitespace.
 */

export interface ChunkOptions {
  targetChars: number;
  overlapChars: number;
  /** Where each page starts in `text` (extractText's `pageStarts`), to number the chunks' pages. */
  pageStarts?: number[];
}

export interface TextChunk {
  text: string;
  start: number;
  end: number;
  /** The page the chunk starts on and the one it ends on (1-based; with `pageStarts` only). */
  page?: number;
  endPage?: number;
}

// Each match's end is a place to cut; strongest first.
const BOUNDARIES = [
  /\n[^\S\n]*\n\s*/g, // paragraph
  /\n\s*/g, // line
  /[.!?…]["'”’»)\]]*\s+|[。！？]["'”’」』)]*\s*/g, // sentence
  /\s+/g, // word
];
const SENTENCE = 2;

export function chunkText(text: string, options: ChunkOptions): TextChunk[] {
  const { targetChars, overlapChars, pageStarts } = options;
  // Two, so that a window can always hold a whole surrogate pair.
  if (!(targetChars >= 2) || !(overlapChars >= 0) || overlapChars >= targetChars)
    throw new RangeError('chunkText needs targetChars ≥ 2 and 0 ≤ overlapChars < targetChars');
  const chunks: TextChunk[] = [];
  let start = skipSpace(text, 0);
  let end = 0;
  while (start < text.length) {
    // No cut past the previous end from an overlapping start (a surrogate pair in the way):
    // this chunk starts where the previous one ended instead.
    let cut = text.length - start <= targetChars ? text.length : findCut(text, start, targetChars, end);
    if (cut === undefined) {
      start = skipSpace(text, end);
      cut = text.length - start <= targetChars ? text.length : findCut(text, start, targetChars, start)!;
    }
    end = cut;
    const chunk = trimmedChunk(text, start, end);
    // A chunk that ends no later than the one before holds nothing new (trailing whitespace).
    if (chunk && chunk.end > (chunks.at(-1)?.end ?? 0)) chunks.push(pageStarts ? withPages(chunk, pageStarts) : chunk);
    if (skipSpace(text, end) >= text.length) break;
    const next = overlapChars > 0 ? findOverlapStart(text, end, overlapChars) : end;
    start = skipSpace(text, next > start ? next : end);
  }
  return chunks;
}

/**
 * The end of the chunk that starts at `start`: the strongest boundary past half the window, and
 * past the previous chunk's end (`after`), so that a large overlap still moves forward.
 */
function findCut(text: string, start: number, target: number, after: number): number | undefined {
  const limit = start + target;
  const earliest = Math.max(start + Math.ceil(target / 2), after);
  for (const pattern of BOUNDARIES) {
    const cut = lastBoundary(text, pattern, earliest, limit);
    if (cut !== undefined) return cut;
  }
  const hard = isHighSurrogate(text.charCodeAt(limit - 1)) ? limit - 1 : limit;
  return hard > after ? hard : undefined;
}

/** Where the next chunk starts: the first sentence (else word) start in the overlap. */
function findOverlapStart(text: string, end: number, overlap: number): number {
  const from = Math.max(0, end - overlap);
  const sentences = BOUNDARIES.slice(0, SENTENCE + 1)
    .map((pattern) => firstBoundary(text, pattern, from, end))
    .filter((at) => at !== undefined);
  if (sentences.length) return Math.min(...sentences);
  const word = firstBoundary(text, BOUNDARIES[SENTENCE + 1]!, from, end);
  if (word !== undefined) return word;
  return isLowSurrogate(text.charCodeAt(from)) ? from + 1 : from;
}

/**
 * The last match end in (from, to]. Matched on the window's own text: searching the whole text
 * from `from` would run on to the next match wherever it is (a megabyte of lines without one
 * blank line took a second).
 */
function lastBoundary(text: string, pattern: RegExp, from: number, to: number): number | undefined {
  const offset = Math.max(0, from - 1);
  const window = text.slice(offset, to);
  let found: number | undefined;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(window); m; m = pattern.exec(window)) {
    const at = offset + m.index + m[0].length;
    if (at > from) found = at;
  }
  return found;
}

/** The first match end in [from, to). */
function firstBoundary(text: string, pattern: RegExp, from: number, to: number): number | undefined {
  const offset = Math.max(0, from - 1);
  const window = text.slice(offset, to);
  pattern.lastIndex = 0;
  for (let m = pattern.exec(window); m; m = pattern.exec(window)) {
    const at = offset + m.index + m[0].length;
    if (at >= from && at < to) return at;
  }
  return undefined;
}

function trimmedChunk(text: string, start: number, end: number): TextChunk | undefined {
  let e = end;
  while (e > start && /\s/.test(text[e - 1]!)) e--;
  if (e === start) return undefined;
  return { text: text.slice(start, e), start, end: e };
}

function withPages(chunk: TextChunk, pageStarts: number[]): TextChunk {
  return { ...chunk, page: pageAt(pageStarts, chunk.start), endPage: pageAt(pageStarts, chunk.end - 1) };
}

/** 1-based: the number of pages that start at or before `offset`. */
function pageAt(pageStarts: number[], offset: number): number {
  let lo = 0;
  let hi = pageStarts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (pageStarts[mid]! <= offset) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(lo, 1);
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at]!)) at++;
  return at;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
