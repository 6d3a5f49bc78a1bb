import type { Transformer } from '@napi-rs/image';
import { loadCodec } from './load-codec';
import { readImageHeader, type SniffedFormat } from './image-header';
import { decoderInput } from './decoder-input';
import { decodeBetweenCollections } from './collect-around-decode';
import { releaseNow } from './release-now';
import type { OpacityGuess } from './opacity-guess';

/**
 * Image → JPEG. Every step that touches pixels is one of @napi-rs/image's promise methods,
 * which run as napi async work on the runtime's worker threads, so the event loop keeps serving
 * other requests while an image converts.
 */

export type ConvertErrorCode = 'INVALID_DATA_URL' | 'UNSUPPORTED_FORMAT' | 'DECODE_FAILED' | 'TOO_LARGE';

export type ConvertResult =
  | { success: true; dataUrl: string; originalFormat: string }
  | { success: false; error: { code: ConvertErrorCode; message: string } };

export interface ConvertLimits {
  maxBytes: number;
  maxPixels: number;
  quality: number;
}

const fail = (code: ConvertErrorCode, message: string): ConvertResult => ({ success: false, error: { code, message } });

const DATA_URL = /^data:([^,]*?)(;base64)?,/i;

/** Decode a data URL's payload, refusing an oversize one from its length before allocating. */
export function parseDataUrl(dataUrl: string, maxBytes: number): Uint8Array | ConvertResult {
  const head = DATA_URL.exec(dataUrl.slice(0, 512));
  if (!head) return fail('INVALID_DATA_URL', 'expected a data URL: data:<type>;base64,<data>');
  const payload = dataUrl.slice(head[0].length);
  if (head[2]) {
    // A length check first (whitespace, which the decoder skips, only makes it generous), then
    // one strict pass that validates and decodes: a regex over a 13 MB payload cost more.
    if (Math.floor((payload.length * 3) / 4) - 2 > maxBytes * 1.1 + 1024) return fail('TOO_LARGE', `the image is larger than ${maxBytes} bytes`);
    try {
      return Uint8Array.fromBase64(payload);
    } catch {
      // Not standard base64: URL-safe characters (alone or mixed in, as lenient encoders and
      // earlier Parley accept), or not base64 at all, which the second pass says.
    }
    try {
      return Uint8Array.fromBase64(payload.replace(/[-_]/g, (c) => (c === '-' ? '+' : '/')));
    } catch {
      return fail('INVALID_DATA_URL', 'the data URL payload is not valid base64');
    }
  }
  const bytes = percentDecode(payload);
  if (!bytes) return fail('INVALID_DATA_URL', 'the data URL payload is not valid percent-encoding');
  return bytes.length > maxBytes ? fail('TOO_LARGE', `the image is larger than ${maxBytes} bytes`) : bytes;
}

/**
 * A percent-encoded payload as bytes: each `%XX` is one byte (RFC 2397), anything else its UTF-8
 * bytes. Not `decodeURIComponent`, which reads the escapes as UTF-8 text and so throws on most
 * binary files (a PNG starts with `%89`). Undefined for a `%` not followed by two hex digits.
 */
function percentDecode(payload: string): Uint8Array | undefined {
  const raw = Buffer.from(payload, 'utf8');
  const out = new Uint8Array(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== 0x25) {
      out[n++] = raw[i]!;
      continue;
    }
    const hi = hexValue(raw[i + 1]);
    const lo = hexValue(raw[i + 2]);
    if (hi < 0 || lo < 0) return undefined;
    out[n++] = hi * 16 + lo;
    i += 2;
  }
  return out.subarray(0, n);
}

function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

// Colour types with an alpha channel (JsColorType La8, Rgba8, La16, Rgba16, Rgba32F).
const WITH_ALPHA = new Set([1, 3, 5, 7, 9]);
const RGBA8 = 3;

/** Words ANDed between two early-exit checks: a transparent pixel near the top ends the scan soon. */
const SCAN_BLOCK = 65536;
/** Blocks scanned between two yields to the event loop (16 MB, a few milliseconds). */
const BLOCKS_PER_TURN = 64;

/**
 * Every alpha byte 255? Read as signed 32-bit words (the alpha of little-endian RGBA is the top
 * byte) and AND eight at a time: all alphas are 255 exactly when the top byte of the AND is.
 * Signed words stay small integers to the JIT and the unrolled AND has no branch per pixel:
 * 14 → 7 ms on 12 MP against a compare per word (bench/RESULTS.md, change 13). It yields every
 * 16 MB, so 50 million pixels do not hold the event loop for their whole scan.
 */
async function isOpaque(px: Uint8Array): Promise<boolean> {
  if (px.byteOffset % 4 !== 0) {
    for (let i = 3; i < px.length; i += 4) if (px[i] !== 255) return false;
    return true;
  }
  const words = new Int32Array(px.buffer, px.byteOffset, px.length >>> 2);
  const n = words.length;
  const unrolled = n - (n % 8);
  let all = -1;
  for (let start = 0, blocks = 0; start < unrolled; start += SCAN_BLOCK) {
    const end = Math.min(unrolled, start + SCAN_BLOCK);
    for (let i = start; i < end; i += 8)
      all &= words[i]! & words[i + 1]! & words[i + 2]! & words[i + 3]! & words[i + 4]! & words[i + 5]! & words[i + 6]! & words[i + 7]!;
    if (all >> 24 !== -1) return false;
    if (++blocks % BLOCKS_PER_TURN === 0 && end < unrolled) await new Promise((resolve) => setImmediate(resolve));
  }
  for (let i = unrolled; i < n; i++) all &= words[i]!;
  return all >> 24 === -1;
}

/**
 * One white pixel (a plain PBM: 0 is white), tiled under the image to flatten it: compositing
 * "destination over" draws the image over white, in the codec's own threads and layout (8 or 16
 * bits, grey or colour), with nothing but this pixel beside the image it decoded already.
 */
const WHITE = new TextEncoder().encode('P1 1 1 0');

/**
 * `guess` says whether an RGBA image's encode may start before its alpha check (opacity-guess.ts);
 * without one it waits for the check.
 */
export async function convertImageToJpeg(dataUrl: string, limits: ConvertLimits, guess?: OpacityGuess): Promise<ConvertResult> {
  const bytes = parseDataUrl(dataUrl, limits.maxBytes);
  if (!(bytes instanceof Uint8Array)) return bytes;
  if (bytes.length === 0) return fail('INVALID_DATA_URL', 'the data URL is empty');
  if (bytes.length > limits.maxBytes) return fail('TOO_LARGE', `the image is larger than ${limits.maxBytes} bytes`);

  const header = readImageHeader(bytes);
  if (!header) return fail('UNSUPPORTED_FORMAT', 'not an image format Parley converts (PNG, JPEG, WebP, AVIF, GIF, BMP, TIFF, ICO, PNM, QOI)');
  const { format, width, height, channelBytes } = header;
  if (width === undefined || height === undefined) return fail('DECODE_FAILED', `the ${format} header is truncated or malformed`);
  // 16-bit channels take twice the memory of 8-bit ones from decoding on, so they count twice.
  if (width * height * channelBytes > limits.maxPixels)
    return fail('TOO_LARGE', `the image is ${width} × ${height} pixels${channelBytes > 1 ? ` of ${8 * channelBytes}-bit channels, which count ${channelBytes} times,` : ','} more than ${limits.maxPixels}`);

  return decodeBetweenCollections(width * height, () => decodeToJpeg(bytes, format, limits, guess));
}

async function decodeToJpeg(bytes: Uint8Array, format: SniffedFormat, limits: ConvertLimits, guess?: OpacityGuess): Promise<ConvertResult> {
  // Outside the try: a codec that cannot load, or a GIF worker that cannot start, is a server
  // fault (500, logged), not a bad image.
  const { Transformer, BlendMode } = await loadCodec();
  const input = await decoderInput(bytes, format);
  if (!(input instanceof Uint8Array)) return fail('DECODE_FAILED', input.error);
  try {
    // One Transformer for everything: it keeps the image it decoded for metadata(), so the
    // conversion does not decode it a second time (that doubled the time, bench/RESULTS.md).
    const source = new Transformer(input);
    const meta = await source.metadata(true);
    // rotate() with no argument applies the EXIF orientation; without one it would only copy
    // the pixels (15–20 % of a 12 MP conversion), so it is skipped.
    const rotated = (meta.orientation ?? 1) > 1;
    const orient = (t: Transformer) => (rotated ? t.rotate() : t);
    const oriented = orient(source);
    if (!WITH_ALPHA.has(meta.colorType)) {
      const jpeg = await oriented.jpeg(limits.quality);
      return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
    }
    // JPEG has no alpha: the encoder would drop it and show whatever colour hides under the
    // transparent pixels, so an image that is not opaque all over is flattened onto white.
    if (meta.colorType === RGBA8) {
      const [w, h] = (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
      // Most RGBA images are opaque all over (screenshots, exports): then the encoder takes the
      // image it already decoded as it is (bench/RESULTS.md change 11). Whether they are is only
      // known from the pixels, so when the guess says opaque and no rotation is staged the
      // encode starts at once, beside the copy out and the check (change 25). Both tasks only
      // read the Transformer's cached decode: metadata(true) above filled it and parsed the
      // EXIF, and in @napi-rs/image 1.15.0 (pinned; its source read for this) a task writes to
      // that cache only to decode or to parse EXIF for a rotation. Re-check this on an upgrade.
      // A transparent image throws the early encode away (cancelled if not started).
      const cancel = new AbortController();
      const early = guess?.likelyOpaque() && !rotated ? source.jpeg(limits.quality, cancel.signal) : undefined;
      // Handled here, so that one thrown away never rejects unheard; awaited below when it is used.
      const earlyDone = early?.then(noop, noop);
      try {
        const opaque = await hasOpaquePixels(oriented, w * h);
        if (opaque !== undefined) guess?.saw(opaque);
        if (opaque) {
          const jpeg = await (early ?? oriented.jpeg(limits.quality));
          return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
        }
      } finally {
        // Whatever did not use the early encode stops it if it has not started, and otherwise
        // awaits it: it must not run on past the answer, outside the conversions
        // PARLEY_IMAGE_CONCURRENCY counts, nor beside the flattening below.
        cancel.abort();
        await earlyDone;
      }
    }
    // (A fresh Transformer when a rotation staged on `oriented` has been applied for the pixels above.)
    const flat = meta.colorType === RGBA8 && rotated ? orient(new Transformer(input)) : oriented;
    const jpeg = await flat.composite(WHITE, { blend: BlendMode.DestOver, tile: true, left: 0, top: 0 }).jpeg(limits.quality);
    return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
  } catch (err) {
    return fail('DECODE_FAILED', `the ${format} image could not be decoded: ${(err as Error).message ?? String(err)}`);
  }
}

/**
 * Whether the 8-bit RGBA pixels are all opaque; undefined when the codec's copy is not the
 * expected layout. The 4 bytes a pixel copied out are given back before this returns, so the
 * flattening's copy of the image never stands beside them.
 */
async function hasOpaquePixels(t: Transformer, pixels: number): Promise<boolean | undefined> {
  const px = await t.rawPixels();
  try {
    return px.length === pixels * 4 ? await isOpaque(px) : undefined;
  } finally {
    releaseNow(px);
  }
}

const noop = () => {};

const toDataUrl = (jpeg: Uint8Array) => `data:image/jpeg;base64,${Buffer.from(jpeg).toString('base64')}`;
