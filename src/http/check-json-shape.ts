import { AppError } from './errors';

/**
 * The deepest nesting, the most values and the longest key a JSON body may have. Parsing costs
 * memory per value, not per byte: 8 MB of `[{},{},…]` takes ~230 MB and two seconds of one core
 * to parse, while 8 MB of one string takes 8 MB. A key costs more than a string value of its
 * length (it is interned), and no input has long ones. The interface's largest structured input
 * (a chat turn with its 16 images) has about 60 values, nests 3 deep and has keys of a few
 * letters; a widget thread message's `data` is free-form JSON, so the bounds leave it far more
 * room than any message needs. At the bounds a parse costs under 1 MB besides its strings.
 */
export const JSON_MAX_DEPTH = 64;
export const JSON_MAX_VALUES = 10_000;
export const JSON_MAX_KEY_BYTES = 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COLON = 0x3a;

/**
 * Refuse, before `JSON.parse`, a body that would nest deeper than `JSON_MAX_DEPTH`, hold more
 * than `JSON_MAX_VALUES` values or have a key longer than `JSON_MAX_KEY_BYTES` (413
 * PAYLOAD_TOO_LARGE). One pass over the bytes: string contents are skipped with `indexOf`
 * (native, so a 13 MB data URL costs about a memchr), and everything else is a few comparisons
 * per byte. Values are counted as containers plus commas plus one, an upper bound of the
 * elements and members a parse creates. The scan does not validate: on a malformed body its
 * counts may be off, and JSON.parse refuses the body next anyway.
 */
export function checkJsonShape(bytes: Uint8Array): void {
  let depth = 0;
  let values = 1;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      const end = closingQuote(bytes, i + 1);
      if (end < 0) return; // unterminated: malformed, for JSON.parse to report
      if (end - i - 1 > JSON_MAX_KEY_BYTES && isKey(bytes, end + 1)) throw tooLongKey();
      i = end;
    } else if (c === COMMA) {
      if (++values > JSON_MAX_VALUES) throw tooManyValues();
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > JSON_MAX_DEPTH) throw tooDeep();
      if (++values > JSON_MAX_VALUES) throw tooManyValues();
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
}

/** The index of the quote that ends the string starting at `from`, or -1. A quote after an odd run of backslashes is escaped. */
function closingQuote(bytes: Uint8Array, from: number): number {
  for (let q = bytes.indexOf(QUOTE, from); q >= 0; q = bytes.indexOf(QUOTE, q + 1)) {
    let slashes = 0;
    while (q - slashes - 1 >= from && bytes[q - slashes - 1] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q;
  }
  return -1;
}

/** Whether the string that ended just before `at` is an object's key: the next byte that is not whitespace is a colon. */
function isKey(bytes: Uint8Array, at: number): boolean {
  while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x09)) at++;
  return bytes[at] === COLON;
}

const tooLarge = (message: string) => new AppError('PAYLOAD_TOO_LARGE', { message });
const tooDeep = () => tooLarge(`JSON nests deeper than ${JSON_MAX_DEPTH} levels`);
const tooManyValues = () => tooLarge(`JSON has more than ${JSON_MAX_VALUES} values`);
const tooLongKey = () => tooLarge(`JSON has a key longer than ${JSON_MAX_KEY_BYTES} bytes`);
