/**
 * Text, Markdown, CSV and JSON need no parser: they are text already. What is checked is that
 * the bytes really are text, so a binary file sent as `text/plain` is refused rather than stored
 * as a page of replacement characters.
 */
import { ExtractError } from './extract-error';

export interface CappedText {
  text: string;
  truncated: boolean;
}

/** Decode with the declared charset if Bun knows it, else UTF-8; a byte-order mark is dropped. */
export function decodeText(bytes: Uint8Array, charset: string | undefined): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder((charset ?? 'utf-8') as ConstructorParameters<typeof TextDecoder>[0]);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  const text = decoder.decode(bytes);
  if (!looksLikeText(text)) throw new ExtractError('damaged', 'The file does not contain text: it may be damaged, or a different kind of file.');
  return text;
}

/** No NUL characters, and at most 1 in 20 characters undecodable. */
function looksLikeText(text: string): boolean {
  if (text.includes('\0')) return false;
  let bad = 0;
  for (let i = text.indexOf('\uFFFD'); i !== -1; i = text.indexOf('\uFFFD', i + 1)) bad++;
  return bad * 20 <= text.length;
}

/** Cut at `max` characters, never between the two halves of a surrogate pair. */
export function capText(text: string, max: number): CappedText {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return { text: text.slice(0, end), truncated: true };
}

/**
 * JSON indented two spaces a level, so that the chunker finds line boundaries in minified JSON.
 * Re-indented, not parsed: a parse would hold the whole value as objects (a 2 MB array of
 * numbers took 170 MB) and round its numbers; here every token is copied as written, memory
 * stays near the output's size, and the output stops at `maxChars`. Text that is not one JSON
 * value (JSON Lines, a truncated file) is indented all the same.
 */
export function prettyJson(json: string, maxChars: number): CappedText {
  const out = createJoiner();
  let depth = 0;
  let from = 0;
  const newline = () => out.push('\n' + '  '.repeat(depth));
  for (let i = 0; i < json.length && out.length <= maxChars; i++) {
    const c = json[i];
    if (c === '"') {
      i = endOfString(json, i);
    } else if (c === ' ' || c === '\n' || c === '\r' || c === '\t') {
      out.push(json.slice(from, i));
      from = i + 1;
    } else if (c === '{' || c === '[') {
      // One value a line, as JSON Lines had it.
      if (depth === 0 && out.length) {
        out.push(json.slice(from, i) + '\n');
        from = i;
      }
      const next = skipSpace(json, i + 1);
      if (json[next] === (c === '{' ? '}' : ']')) {
        out.push(json.slice(from, i + 1) + json[next]);
        i = next;
      } else {
        out.push(json.slice(from, i + 1));
        depth++;
        newline();
      }
      from = i + 1;
    } else if (c === '}' || c === ']') {
      out.push(json.slice(from, i));
      depth = Math.max(0, depth - 1);
      newline();
      from = i;
    } else if (c === ',') {
      out.push(json.slice(from, i + 1));
      newline();
      from = i + 1;
    } else if (c === ':') {
      out.push(json.slice(from, i + 1) + ' ');
      from = i + 1;
    }
  }
  if (out.length <= maxChars) out.push(json.slice(from));
  return capText(out.join(), maxChars);
}

/** The index of the quote that closes the string opening at `at` (or the text's end). */
function endOfString(json: string, at: number): number {
  for (let i = at + 1; i < json.length; i++) {
    if (json[i] === '\\') i++;
    else if (json[i] === '"') return i;
  }
  return json.length;
}

function skipSpace(json: string, at: number): number {
  while (at < json.length && ' \n\r\t'.includes(json[at]!)) at++;
  return at;
}

/** Many small strings into one, joined a batch at a time so the pieces don't pile up. */
function createJoiner() {
  const batches: string[] = [];
  let batch: string[] = [];
  return {
    length: 0,
    push(piece: string) {
      if (!piece) return;
      batch.push(piece);
      this.length += piece.length;
      if (batch.length >= 4096) {
        batches.push(batch.join(''));
        batch = [];
      }
    },
    join() {
      return batches.join('') + batch.join('');
    },
  };
}
