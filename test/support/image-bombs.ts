/**
 * Hostile images for the memory tests: tiny files that make a decoder allocate far more than
 * their size says. Built here rather than stored, so each test shows what its file is.
 */
import { constants, crc32, deflateSync } from 'node:zlib';
import { buildGif } from '../fixtures/gif';

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** One PNG chunk: length, type, data, CRC of type and data. */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, data.length);
  out.set(Buffer.from(type, 'latin1'), 4);
  out.set(data, 8);
  v.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

const concat = (parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const latin1 = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));

/** zlib of `bytes` zeros: run-length matching makes 300 MB ~290 KB in a fraction of a second. */
export function zlibZeros(bytes: number): Uint8Array {
  return deflateSync(Buffer.alloc(bytes), { level: 1, strategy: constants.Z_RLE });
}

export interface PngOptions {
  width?: number;
  height?: number;
  /** PNG colour type: 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA. */
  colorType?: number;
  bitDepth?: number;
  /** Chunks placed between IHDR and IDAT. */
  before?: Uint8Array[];
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** A valid PNG whose pixels are all zero bytes (black, and transparent where there is alpha). */
export function zeroPng(opts: PngOptions = {}): Uint8Array {
  const { width = 1, height = 1, colorType = 6, bitDepth = 8 } = opts;
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([bitDepth, colorType, 0, 0, 0], 8);
  const rowBytes = 1 + Math.ceil((width * CHANNELS[colorType]! * bitDepth) / 8);
  const plte = colorType === 3 ? [pngChunk('PLTE', new Uint8Array([0, 0, 0]))] : [];
  return concat([
    new Uint8Array(SIGNATURE),
    pngChunk('IHDR', ihdr),
    ...plte,
    ...(opts.before ?? []),
    pngChunk('IDAT', zlibZeros(rowBytes * height)),
    pngChunk('IEND', new Uint8Array()),
  ]);
}

/**
 * An 8-bit RGBA PNG of opaque white: each row filtered "Sub", so it is one white pixel and zero
 * differences after it, which compress as well as zeros (a 4096 × 4096 one is ~70 KB).
 */
export function whitePng(width: number, height: number): Uint8Array {
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const row = new Uint8Array(1 + width * 4);
  row.set([1, 255, 255, 255, 255]);
  const rows = new Uint8Array(row.length * height);
  for (let y = 0; y < height; y++) rows.set(row, y * row.length);
  return concat([new Uint8Array(SIGNATURE), pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(rows, { level: 9 })), pngChunk('IEND', new Uint8Array())]);
}

/** A 1×1 PNG whose ICC profile inflates to `bytes` zeros. */
export const iccpBomb = (bytes: number) => zeroPng({ before: [pngChunk('iCCP', concat([latin1('bomb\0'), new Uint8Array([0]), zlibZeros(bytes)]))] });

/** A 1×1 PNG with a compressed text chunk (zTXt) that inflates to `bytes` zeros. */
export const ztxtBomb = (bytes: number) => zeroPng({ before: [pngChunk('zTXt', concat([latin1('Comment\0'), new Uint8Array([0]), zlibZeros(bytes)]))] });

/** A 1×1 PNG with a compressed international text chunk (iTXt) that inflates to `bytes` zeros. */
export const itxtBomb = (bytes: number) =>
  zeroPng({ before: [pngChunk('iTXt', concat([latin1('Comment\0'), new Uint8Array([1, 0]), latin1('en\0\0'), zlibZeros(bytes)]))] });

/** A one-colour GIF of the given size (its LZW stream is small; the decoder still fills every pixel). */
export function plainGif(width: number, height: number): Uint8Array {
  return buildGif({ width, height, palette: [[40, 120, 200], [0, 0, 0]], indices: new Uint8Array(width * height) });
}

/** An ICO holding one image, `png`, declared as `size` × `size` (0 means 256). */
export function icoOf(png: Uint8Array, size = 1): Uint8Array {
  const out = new Uint8Array(6 + 16 + png.length);
  const v = new DataView(out.buffer);
  v.setUint16(2, 1, true); // type: icon
  v.setUint16(4, 1, true); // one image
  out[6] = size;
  out[7] = size;
  v.setUint16(6 + 4, 1, true); // colour planes
  v.setUint16(6 + 6, 32, true); // bits per pixel
  v.setUint32(6 + 8, png.length, true);
  v.setUint32(6 + 12, 6 + 16, true);
  out.set(png, 6 + 16);
  return out;
}
