import fc from 'fast-check';
import { JSON_MAX_DEPTH, JSON_MAX_KEY_BYTES, JSON_MAX_VALUES } from '../../src/http/check-json-shape';

/**
 * JSON bodies whose parse costs far more than their bytes (or as much as the bounds of
 * src/http/check-json-shape.ts admit), each as large as `size` allows: the shapes outside probes
 * used to make one body take gigabytes.
 */
export function costlyBodies(size: number): { kind: string; body: Uint8Array }[] {
  const encode = (text: string) => new TextEncoder().encode(text);
  /** `[unit,unit,…]` filling `size`. */
  const array = (unit: string) => `[${`${unit},`.repeat(Math.floor((size - 2) / (unit.length + 1)) - 1)}${unit}]`;
  const depth = Math.floor(size / 2);
  const keyCount = Math.floor((size - 2) / 13);
  // The longest keys the bounds admit, as many as fit (distinct: each is interned on its own).
  const longKeys = Math.min(Math.floor((size - 2) / (JSON_MAX_KEY_BYTES + 5)), JSON_MAX_VALUES - 1);
  return [
    { kind: 'tiny values [0,0,…]', body: encode(array('0')) },
    { kind: 'empty objects [{},{},…]', body: encode(array('{}')) },
    { kind: 'empty arrays [[],[],…]', body: encode(array('[]')) },
    { kind: 'empty strings ["","",…]', body: encode(array('""')) },
    { kind: 'deep nesting', body: encode('['.repeat(depth) + ']'.repeat(depth)) },
    { kind: 'many keys', body: encode(`{${Array.from({ length: keyCount }, (_, i) => `"${i.toString(36).padStart(8, '0')}":0`).join(',')}}`) },
    { kind: 'one long key', body: encode(`{"${'k'.repeat(size - 6)}":0}`) },
    {
      kind: `${longKeys} keys of ${JSON_MAX_KEY_BYTES} bytes`,
      body: encode(`{${Array.from({ length: longKeys }, (_, i) => `"${String(i).padStart(JSON_MAX_KEY_BYTES, 'k')}":0`).join(',')}}`),
    },
    { kind: 'one long string', body: encode(`["${'s'.repeat(size - 4)}"]`) },
  ];
}

/** The shape of a parsed JSON value as src/http/check-json-shape.ts counts it in the text JSON.stringify makes of it. */
export function measureJson(value: unknown): { depth: number; values: number; longestKey: number } {
  let values = 1;
  let longestKey = 0;
  const visit = (v: unknown, level: number): number => {
    if (!v || typeof v !== 'object') return level;
    const entries = Array.isArray(v) ? v.map((x) => ['', x] as const) : Object.entries(v);
    // Each container, and each comma between its entries.
    values += 1 + Math.max(0, entries.length - 1);
    let deepest = level + 1;
    for (const [key, x] of entries) {
      if (!Array.isArray(v)) longestKey = Math.max(longestKey, Buffer.byteLength(JSON.stringify(key)) - 2);
      deepest = Math.max(deepest, visit(x, level + 1));
    }
    return deepest;
  };
  const depth = visit(value, 0);
  return { depth, values, longestKey };
}

/** Text that tempts a scanner: structural characters, quotes and backslashes, escapes, several bytes per character. */
const trickyText = (maxLength: number) => fc.string({ unit: fc.constantFrom('[', ']', '{', '}', ',', ':', '"', '\\', ' ', '\n', 'a', 'é', '😀', '\u0000'), maxLength });

/** `prefix`, then `unit` repeated, then `k`s: a key of exactly `bytes` bytes as JSON writes it. */
function keyOfBytes(prefix: string, unit: string, bytes: number): string {
  const unitBytes = Buffer.byteLength(JSON.stringify(unit)) - 2;
  const n = Math.floor((bytes - prefix.length) / unitBytes);
  return prefix + unit.repeat(n) + 'k'.repeat(bytes - prefix.length - n * unitBytes);
}

/** JSON values around the bounds: deep nesting, wide arrays of tiny values, long keys, tricky strings, mixed. */
export const costlyJsonArb: fc.Arbitrary<unknown> = fc.oneof(
  // nesting around the depth bound, arrays and objects mixed, around any small value
  fc.tuple(fc.array(fc.boolean(), { minLength: JSON_MAX_DEPTH - 6, maxLength: JSON_MAX_DEPTH + 6 }), fc.jsonValue({ maxDepth: 1 })).map(([levels, leaf]) =>
    levels.reduce<unknown>((inner, isArray) => (isArray ? [inner] : { k: inner }), leaf),
  ),
  // arrays of tiny values around the value bound
  fc.tuple(fc.integer({ min: JSON_MAX_VALUES - 10, max: JSON_MAX_VALUES + 10 }), fc.constantFrom<unknown>(0, {}, [], '', null, true)).map(([n, unit]) => Array(n).fill(unit)),
  // keys of around the bound's bytes as written (escapes and UTF-8 included)
  fc.array(fc.tuple(fc.integer({ min: JSON_MAX_KEY_BYTES - 8, max: JSON_MAX_KEY_BYTES + 8 }), fc.constantFrom('k', 'é', '"', '\n')), { minLength: 1, maxLength: 3 }).map((keys) =>
    Object.fromEntries(keys.map(([bytes, unit], i) => [keyOfBytes(`${i}`, unit, bytes), i])),
  ),
  // long string values (never keys), and strings full of structural characters
  fc.array(fc.oneof(trickyText(40), fc.constant('v'.repeat(JSON_MAX_KEY_BYTES + 100))), { maxLength: 50 }),
  fc.dictionary(trickyText(12), fc.oneof(trickyText(30), fc.jsonValue({ maxDepth: 3 })), { maxKeys: 20 }),
);
