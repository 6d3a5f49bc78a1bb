/**
 * Request bodies and images made to cost a server far more than their size: JSON whose parse
 * allocates many times the bytes sent, and images whose decode asks for far more memory than
 * the file holds. Shared by the memory-bomb fault script and the tests, so both send the same.
 */
import { deflateRawSync, deflateSync } from 'node:zlib';
import { docxParts, zipRaw } from '../../test/fixtures/documents';

/** JSON texts of about `bytes` bytes, each a shape that is cheap to send and dear to parse. */
export function costlyJsonShapes(bytes: number): { name: string; body: string }[] {
  const repeat = (unit: string, open: string, close: string) => open + unit.repeat(Math.max(1, Math.floor((bytes - open.length - close.length) / unit.length))).slice(0, -1) + close;
  const depth = Math.floor(bytes / 2);
  let keys = '{';
  for (let i = 0; keys.length < bytes; i++) keys += `"k${i}":0,`;
  return [
    { name: 'deep nesting', body: '['.repeat(depth) + ']'.repeat(depth) },
    { name: 'many numbers', body: repeat('0,', '{"messages":[', ']}') },
    { name: 'many empty objects', body: repeat('{},', '{"messages":[', ']}') },
    { name: 'many empty arrays', body: repeat('[],', '{"messages":[', ']}') },
    { name: 'many empty strings', body: repeat('"",', '{"messages":[', ']}') },
    { name: 'many keys', body: keys.slice(0, -1) + '}' },
  ];
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(parts: Uint8Array[]): number {
  let c = 0xffffffff;
  for (const p of parts) for (const b of p) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  const typeBytes = new TextEncoder().encode(type);
  view.setUint32(0, data.length);
  out.set(typeBytes, 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32([typeBytes, data]));
  return out;
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const latin1 = (s: string) => new Uint8Array([...s].map((c) => c.charCodeAt(0)));

/** Zeros compressed with zlib: `size` bytes once inflated, about a thousandth of that on the wire. */
const zeros = (size: number) => new Uint8Array(deflateSync(new Uint8Array(size), { level: 9 }));

/** An RGBA PNG of `width` × `height` whose pixels are all zero, with extra chunks before its pixels. */
export function png(width: number, height: number, extra: Uint8Array[] = []): Uint8Array {
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, adaptive filter, no interlace
  const rows = (1 + width * 4) * height;
  return concat([
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    ...extra,
    pngChunk('IDAT', zeros(rows)),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

/** A 1×1 PNG whose ICC profile inflates to `size` bytes. */
export const iccpBomb = (size: number) => png(1, 1, [pngChunk('iCCP', concat([latin1('icc\0\0'), zeros(size)]))]);

/** A 1×1 PNG whose compressed text (zTXt) inflates to `size` bytes. */
export const ztxtBomb = (size: number) => png(1, 1, [pngChunk('zTXt', concat([latin1('Comment\0\0'), zeros(size)]))]);

/** A 1×1 PNG whose compressed international text (iTXt) inflates to `size` bytes. */
export const itxtBomb = (size: number) => png(1, 1, [pngChunk('iTXt', concat([latin1('Comment\0\x01\0\0\0'), zeros(size)]))]);

/**
 * A GIF of `width` × `height` whose only frame's data is a clear code and an end code: a few dozen
 * bytes that ask the decoder for a full canvas.
 */
export function gifBomb(width: number, height: number): Uint8Array {
  const le16 = (n: number) => [n & 0xff, n >> 8];
  return new Uint8Array([
    ...latin1('GIF89a'),
    ...le16(width),
    ...le16(height),
    0x80, 0, 0, // a global colour table of 2 entries
    0, 0, 0, 255, 255, 255,
    0x2c, 0, 0, 0, 0, ...le16(width), ...le16(height), 0,
    2, // LZW minimum code size
    1, 0x2c, // one sub-block: clear (4) then end (5), 3-bit codes
    0,
    0x3b,
  ]);
}

export const dataUrl = (type: string, bytes: Uint8Array) => `data:${type};base64,${Buffer.from(bytes).toString('base64')}`;

/**
 * A GIF of `frames` frames, each covering the whole `width` × `height` canvas with a clear code
 * and an end code: a few bytes a frame, every one of them a full canvas to a decoder that reads
 * them all.
 */
export function animatedGifBomb(width: number, height: number, frames: number): Uint8Array {
  const le16 = (n: number) => [n & 0xff, n >> 8];
  const frame = [0x21, 0xf9, 4, 0, 10, 0, 0, 0, 0x2c, 0, 0, 0, 0, ...le16(width), ...le16(height), 0, 2, 1, 0x2c, 0];
  const loop = [0x21, 0xff, 11, ...latin1('NETSCAPE2.0'), 3, 1, 0, 0, 0];
  return new Uint8Array([...latin1('GIF89a'), ...le16(width), ...le16(height), 0x80, 0, 0, 0, 0, 0, 255, 255, 255, ...loop, ...Array.from({ length: frames }, () => frame).flat(), 0x3b]);
}

/**
 * A Word document (a ZIP with `word/document.xml`) whose text part unpacks to about `bytes` bytes
 * of one-letter paragraphs: as dear to the DOCX reader as a document can be (each paragraph a few
 * objects in its tree).
 */
export function heavyDocx(bytes: number): Uint8Array {
  const parts = docxParts(Array.from({ length: Math.floor(bytes / PARAGRAPH_BYTES) }, () => 'a'));
  return zipRaw(
    Object.entries(parts).map(([name, xml]) => {
      const raw = new TextEncoder().encode(xml);
      return { name, data: new Uint8Array(deflateRawSync(raw, { level: 9 })), size: raw.length };
    }),
  );
}

/** What one paragraph of one letter takes in `word/document.xml` (test/fixtures/documents.ts writes it). */
const PARAGRAPH_BYTES = '<w:p><w:r><w:t xml:space="preserve">a</w:t></w:r></w:p>'.length;
