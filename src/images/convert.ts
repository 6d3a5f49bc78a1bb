import type { Transformer } from '@napi-rs/image';
import { loadCodec } from './load-codec';
import { readImageHeader } from './image-header';
import { decodeGifFirstFrame } from './gif';
import { stripIcoChunks, stripPngChunks } from './strip-compressed-chunks';
import { collectAfterDecode } from './collect-after-decode';
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
/** Bytes blended between two yields: a 12 MP image never holds the event loop for long. */
const FLATTEN_SLICE = 4 * 1024 * 1024;

/** Words ANDed between two early-exit checks: a transparent pixel near the top ends the scan soon. */
const SCAN_BLOCK = 65536;

/**
 * Every alpha byte 255? Read as signed 32-bit words (the alpha of little-endian RGBA is the top
 * byte) and AND eight at a time: all alphas are 255 exactly when the top byte of the AND is.
 * Signed words stay small integers to the JIT and the unrolled AND has no branch per pixel:
 * 14 → 7 ms on 12 MP against a compare per word (bench/RESULTS.md, change 13).
 */
function isOpaque(px: Uint8Array): boolean {
  if (px.byteOffset % 4 !== 0) {
    for (let i = 3; i < px.length; i += 4) if (px[i] !== 255) return false;
    return true;
  }
  const words = new Int32Array(px.buffer, px.byteOffset, px.length >>> 2);
  const n = words.length;
  const unrolled = n - (n % 8);
  let all = -1;
  for (let start = 0; start < unrolled; start += SCAN_BLOCK) {
    const end = Math.min(unrolled, start + SCAN_BLOCK);
    for (let i = start; i < end; i += 8)
      all &= words[i]! & words[i + 1]! & words[i + 2]! & words[i + 3]! & words[i + 4]! & words[i + 5]! & words[i + 6]! & words[i + 7]!;
    if (all >> 24 !== -1) return false;
  }
  for (let i = unrolled; i < n; i++) all &= words[i]!;
  return all >> 24 === -1;
}

/** Composite 8-bit RGBA pixels over white, in place (opaque pixels are left as they are). */
async function flattenOntoWhite(px: Uint8Array): Promise<void> {
  for (let start = 0; start < px.length; start += FLATTEN_SLICE) {
    const end = Math.min(px.length, start + FLATTEN_SLICE);
    for (let i = start + 3; i < end; i += 4) {
      const a = px[i]!;
      if (a === 255) continue;
      const white = 255 * (255 - a);
      px[i - 3] = (px[i - 3]! * a + white) / 255;
      px[i - 2] = (px[i - 2]! * a + white) / 255;
      px[i - 1] = (px[i - 1]! * a + white) / 255;
      px[i] = 255;
    }
    if (end < px.length) await new Promise((resolve) => setImmediate(resolve));
  }
}

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

  // Outside the try: a codec that cannot load is a server fault (500, logged), not a bad image.
  const { Transformer } = await loadCodec();
  try {
    if (format === 'gif') {
      const frame = await decodeGifFirstFrame(bytes);
      const jpeg = await Transformer.fromRgbaPixels(frame.rgba, frame.width, frame.height).jpeg(limits.quality);
      return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
    }
    // One Transformer for everything: it keeps the image it decoded for metadata(), so the
    // conversion does not decode it a second time (that doubled the time, bench/RESULTS.md).
    const input = format === 'png' ? stripPngChunks(bytes) : format === 'ico' ? stripIcoChunks(bytes) : bytes;
    const source = new Transformer(input);
    const meta = await source.metadata(true);
    // rotate() with no argument applies the EXIF orientation; without one it would only copy
    // the pixels (15–20 % of a 12 MP conversion), so it is skipped.
    const orient = (t: Transformer) => ((meta.orientation ?? 1) > 1 ? t.rotate() : t);
    const oriented = orient(source);
    if (!WITH_ALPHA.has(meta.colorType)) {
      const jpeg = await oriented.jpeg(limits.quality);
      return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
    }
    // JPEG has no alpha: the encoder would drop it and show whatever colour hides under the
    // transparent pixels. Flatten onto white first: 8-bit RGBA (most PNGs and WebPs) in place...
    if (meta.colorType === RGBA8) {
      const [w, h] = (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
      // Most RGBA images are opaque all over (screenshots, exports): then the encoder takes the
      // image it already decoded, with no copy back in (bench/RESULTS.md change 11). Whether they
      // are is only known from the pixels, so when the guess says opaque and no rotation is
      // staged the encode starts at once, beside the copy out and the check (change 25). Both
      // tasks only read the Transformer's cached decode: metadata(true) above filled it and
      // parsed the EXIF, and in @napi-rs/image 1.15.0 (pinned; its source read for this) a task
      // writes to that cache only to decode or to parse EXIF for a rotation. Re-check this on
      // an upgrade. A transparent image throws the early encode away (cancelled if not started).
      const cancel = new AbortController();
      const early = guess?.likelyOpaque() && (meta.orientation ?? 1) <= 1 ? source.jpeg(limits.quality, cancel.signal) : undefined;
      // Handled here, so that one thrown away never rejects unheard; awaited below when it is used.
      const earlyDone = early?.then(noop, noop);
      try {
        const pixels = await oriented.rawPixels();
        if (pixels.length === w * h * 4) {
          const opaque = isOpaque(pixels);
          guess?.saw(opaque);
          if (opaque) {
            const jpeg = await (early ?? oriented.jpeg(limits.quality));
            return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
          }
          cancel.abort();
          await flattenOntoWhite(pixels);
          const jpeg = await Transformer.fromRgbaPixels(pixels, w, h).jpeg(limits.quality);
          return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
        }
      } finally {
        // Whatever did not use the early encode (a transparent image, a failed copy, the layout
        // path below) stops it if it has not started, and otherwise awaits it: it must not run on
        // past the answer, outside the conversions PARLEY_IMAGE_CONCURRENCY counts.
        cancel.abort();
        await earlyDone;
      }
    }
    // ...other layouts (grey + alpha, 16-bit) by compositing over a white canvas, which costs a
    // PNG encode and decode more (×6 the plain transcode on 12 MP, bench/RESULTS.md).
    // (A fresh Transformer when the RGBA8 attempt above has used `oriented` already.)
    const rotated = await (meta.colorType === RGBA8 ? orient(new Transformer(input)) : oriented).png();
    const size = readImageHeader(rotated);
    if (!size?.width || !size.height) throw new Error('rotated PNG without dimensions');
    const white = new Uint8Array(size.width * size.height * 4).fill(255);
    const jpeg = await Transformer.fromRgbaPixels(white, size.width, size.height).overlay(rotated, 0, 0).jpeg(limits.quality);
    return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
  } catch (err) {
    return fail('DECODE_FAILED', `the ${format} image could not be decoded: ${(err as Error).message ?? String(err)}`);
  } finally {
    collectAfterDecode(width * height);
  }
}

const noop = () => {};

const toDataUrl = (jpeg: Uint8Array) => `data:image/jpeg;base64,${Buffer.from(jpeg).toString('base64')}`;
