import { JSON_MAX_KEY_BYTES, JSON_MAX_VALUES } from '../../src/http/check-json-shape';

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
