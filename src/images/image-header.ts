/**
 * Read an image's format and pixel dimensions from its first bytes, without decoding it. The
 * converter checks width × height against the pixel limit BEFORE handing the bytes to the
 * decoder, so a small file that claims to be huge (a decompression bomb) is refused before
 * anything is allocated for its pixels.
 */

export type SniffedFormat = 'png' | 'jpeg' | 'webp' | 'gif' | 'bmp' | 'tiff' | 'avif' | 'ico' | 'pnm' | 'qoi';

export interface ImageHeader {
  format: SniffedFormat;
  /** Undefined when the header is truncated or malformed (the decoder would fail too). */
  width?: number;
  height?: number;
  /**
   * Bytes per channel of the decoded pixels: 2 for 16-bit PNG, TIFF, PNM and AVIF (10 and 12
   * bits decode to 16), 4 or 8 for 32- and 64-bit TIFF samples, else 1. The decoder's buffers
   * grow with it, so the pixel limit weighs pixels by it.
   */
  channelBytes: number;
}

const ascii = (b: Uint8Array, at: number, len: number) => String.fromCharCode(...b.subarray(at, at + len));
const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** Format by magic number, or undefined for anything Parley does not convert. */
export function sniffFormat(b: Uint8Array): SniffedFormat | undefined {
  // Three bytes are enough to tell a PNM, whose smallest files are under 12; the longer magics
  // below simply do not match a shorter input.
  if (b.length < 3) return undefined;
  if (b[0] === 0x89 && ascii(b, 1, 3) === 'PNG') return 'png';
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') return 'webp';
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return 'gif';
  if (ascii(b, 0, 2) === 'BM') return 'bmp';
  if (ascii(b, 0, 4) === 'II*\0' || ascii(b, 0, 4) === 'MM\0*') return 'tiff';
  if (ascii(b, 4, 4) === 'ftyp' && isAvifBrand(b)) return 'avif';
  if (b[0] === 0 && b[1] === 0 && b[2] === 1 && b[3] === 0) return 'ico';
  if (b[0] === 0x50 && b[1]! >= 0x31 && b[1]! <= 0x37 && /\s/.test(String.fromCharCode(b[2]!))) return 'pnm';
  if (ascii(b, 0, 4) === 'qoif') return 'qoi';
  return undefined;
}

/** The major brand or any compatible brand of the `ftyp` box is `avif`/`avis` (HEIC is not). */
function isAvifBrand(b: Uint8Array): boolean {
  const size = Math.min(dv(b).getUint32(0), b.length, 256);
  for (let at = 8; at + 4 <= size; at += 4) if (['avif', 'avis'].includes(ascii(b, at, 4))) return true;
  return false;
}

export function readImageHeader(b: Uint8Array): ImageHeader | undefined {
  const format = sniffFormat(b);
  if (!format) return undefined;
  try {
    const dims = READERS[format](b);
    return dims && dims.width > 0 && dims.height > 0 ? { format, channelBytes: 1, ...dims } : { format, channelBytes: 1 };
  } catch {
    return { format, channelBytes: 1 }; // ran off the end of a truncated header
  }
}

type Dims = { width: number; height: number; channelBytes?: number } | undefined;

/** Bytes a sample of `bits` bits decodes to: 1, 2, 4 or 8 (a nonsense value counts as the most). */
const bytesOfBits = (bits: number) => Math.min(8, Math.max(1, Math.ceil(bits / 8)));

const READERS: Record<SniffedFormat, (b: Uint8Array) => Dims> = {
  png: (b) => (ascii(b, 12, 4) === 'IHDR' ? { width: dv(b).getUint32(16), height: dv(b).getUint32(20), channelBytes: bytesOfBits(b[24]!) } : undefined),
  qoi: (b) => ({ width: dv(b).getUint32(4), height: dv(b).getUint32(8) }),
  jpeg: readJpeg,
  webp: readWebp,
  gif: readGif,
  bmp: (b) => {
    const v = dv(b);
    const headerSize = v.getUint32(14, true);
    if (headerSize === 12) return { width: v.getUint16(18, true), height: v.getUint16(20, true) };
    return { width: Math.abs(v.getInt32(18, true)), height: Math.abs(v.getInt32(22, true)) };
  },
  tiff: readTiff,
  avif: readAvif,
  // Each ICO entry is at most 256 × 256 (0 means 256); the largest entry is what gets decoded.
  ico: (b) => {
    const v = dv(b);
    let width = 0;
    let height = 0;
    for (let i = 0, n = v.getUint16(4, true); i < n && 6 + 16 * (i + 1) <= b.length; i++) {
      width = Math.max(width, b[6 + 16 * i] || 256);
      height = Math.max(height, b[7 + 16 * i] || 256);
    }
    return width ? { width, height } : undefined;
  },
  pnm: (b) => {
    // P1–P6: "P6 <w> <h> ..." with comments; P7 (PAM): "WIDTH w\nHEIGHT h".
    // A maximum value over 255 means 16-bit samples.
    const text = ascii(b, 0, Math.min(b.length, 512)).replace(/#[^\n]*/g, ' ');
    if (text[1] === '7') {
      const w = /WIDTH\s+(\d+)/.exec(text);
      const h = /HEIGHT\s+(\d+)/.exec(text);
      const max = /MAXVAL\s+(\d+)/.exec(text);
      return w && h ? { width: Number(w[1]), height: Number(h[1]), channelBytes: max && Number(max[1]) > 255 ? 2 : 1 } : undefined;
    }
    const m = /^P([1-6])\s+(\d+)\s+(\d+)(?:\s+(\d+))?/.exec(text);
    return m ? { width: Number(m[2]), height: Number(m[3]), channelBytes: '2356'.includes(m[1]!) && Number(m[4] ?? 0) > 255 ? 2 : 1 } : undefined;
  },
};

/** Walk the markers to the first start-of-frame (SOF0–SOF15 except DHT, JPG, DAC). */
function readJpeg(b: Uint8Array): Dims {
  const v = dv(b);
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2;
      continue;
    }
    const length = v.getUint16(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { height: v.getUint16(at + 5), width: v.getUint16(at + 7) };
    at += 2 + length;
  }
  return undefined;
}

function readWebp(b: Uint8Array): Dims {
  const v = dv(b);
  const chunk = ascii(b, 12, 4);
  if (chunk === 'VP8X') return { width: 1 + (v.getUint32(24, true) & 0xffffff), height: 1 + (v.getUint32(27, true) & 0xffffff) };
  if (chunk === 'VP8L') {
    const bits = v.getUint32(21, true);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  if (chunk === 'VP8 ') return { width: v.getUint16(26, true) & 0x3fff, height: v.getUint16(28, true) & 0x3fff };
  return undefined;
}

/** The logical screen, or the first frame when it claims more (the decoder allocates for the frame). */
function readGif(b: Uint8Array): Dims {
  const v = dv(b);
  let width = v.getUint16(6, true);
  let height = v.getUint16(8, true);
  const flags = b[10]!;
  let at = 13 + (flags & 0x80 ? 3 * (1 << ((flags & 7) + 1)) : 0);
  while (at < b.length) {
    const block = b[at];
    if (block === 0x2c) {
      width = Math.max(width, v.getUint16(at + 1, true) + v.getUint16(at + 5, true));
      height = Math.max(height, v.getUint16(at + 3, true) + v.getUint16(at + 7, true));
      break;
    }
    if (block !== 0x21) break;
    at += 2; // extension introducer and label, then sub-blocks up to a zero length
    while (at < b.length && b[at] !== 0) at += 1 + b[at]!;
    at++;
  }
  return { width, height };
}

function readTiff(b: Uint8Array): Dims {
  const v = dv(b);
  const le = b[0] === 0x49;
  const ifd = v.getUint32(4, le);
  const count = v.getUint16(ifd, le);
  let width: number | undefined;
  let height: number | undefined;
  let bits = 8;
  for (let i = 0; i < count; i++) {
    const e = ifd + 2 + 12 * i;
    const tag = v.getUint16(e, le);
    if (tag !== 256 && tag !== 257 && tag !== 258) continue;
    const short = v.getUint16(e + 2, le) === 3;
    if (tag === 258) {
      // BitsPerSample: one value per sample, inline when two fit in the entry, else at an offset.
      const inline = !short || v.getUint32(e + 4, le) <= 2;
      const at = inline ? e + 8 : v.getUint32(e + 8, le);
      bits = short ? v.getUint16(at, le) : v.getUint32(at, le);
      continue;
    }
    const value = short ? v.getUint16(e + 8, le) : v.getUint32(e + 8, le);
    if (tag === 256) width = value;
    else height = value;
  }
  return width !== undefined && height !== undefined ? { width, height, channelBytes: bytesOfBits(bits) } : undefined;
}

/**
 * Every `ispe` (image spatial extents) property in the header; the largest is the canvas to
 * decode. `pixi` (bits per channel) over 8 means 10 or 12 bits, which decode to 16.
 */
function readAvif(b: Uint8Array): Dims {
  const v = dv(b);
  let width = 0;
  let height = 0;
  let bits = 8;
  const end = Math.min(b.length - 16, 1 << 20);
  for (let at = 4; at < end; at++) {
    if (b[at] === 0x69 && b[at + 1] === 0x73 && b[at + 2] === 0x70 && b[at + 3] === 0x65) {
      width = Math.max(width, v.getUint32(at + 8));
      height = Math.max(height, v.getUint32(at + 12));
    }
    // 'pixi', version and flags, the number of channels, then each channel's bits.
    if (b[at] === 0x70 && b[at + 1] === 0x69 && b[at + 2] === 0x78 && b[at + 3] === 0x69)
      for (let c = 0; c < b[at + 8]! && at + 9 + c < b.length; c++) bits = Math.max(bits, b[at + 9 + c]!);
  }
  return width ? { width, height, channelBytes: bits > 8 ? 2 : 1 } : undefined;
}
