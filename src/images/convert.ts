import { Transformer } from '@napi-rs/image';
import { readImageHeader } from './image-header';
import { decodeGifFirstFrame } from './gif';

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
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Decode a data URL's payload, refusing an oversize one from its length before allocating. */
export function parseDataUrl(dataUrl: string, maxBytes: number): Uint8Array | ConvertResult {
  const head = DATA_URL.exec(dataUrl.slice(0, 512));
  if (!head) return fail('INVALID_DATA_URL', 'expected a data URL: data:<type>;base64,<data>');
  const payload = dataUrl.slice(head[0].length);
  if (head[2]) {
    const clean = /\s/.test(payload) ? payload.replace(/\s+/g, '') : payload;
    if (Math.floor((clean.length * 3) / 4) - 2 > maxBytes) return fail('TOO_LARGE', `the image is larger than ${maxBytes} bytes`);
    if (!BASE64.test(clean)) return fail('INVALID_DATA_URL', 'the data URL payload is not valid base64');
    return new Uint8Array(Buffer.from(clean, clean.includes('-') || clean.includes('_') ? 'base64url' : 'base64'));
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(Buffer.from(decodeURIComponent(payload), 'latin1'));
  } catch {
    return fail('INVALID_DATA_URL', 'the data URL payload is not valid percent-encoding');
  }
  return bytes.length > maxBytes ? fail('TOO_LARGE', `the image is larger than ${maxBytes} bytes`) : bytes;
}

// Colour types with an alpha channel (JsColorType La8, Rgba8, La16, Rgba16, Rgba32F).
const WITH_ALPHA = new Set([1, 3, 5, 7, 9]);

export async function convertImageToJpeg(dataUrl: string, limits: ConvertLimits): Promise<ConvertResult> {
  const bytes = parseDataUrl(dataUrl, limits.maxBytes);
  if (!(bytes instanceof Uint8Array)) return bytes;
  if (bytes.length === 0) return fail('INVALID_DATA_URL', 'the data URL is empty');
  if (bytes.length > limits.maxBytes) return fail('TOO_LARGE', `the image is larger than ${limits.maxBytes} bytes`);

  const header = readImageHeader(bytes);
  if (!header) return fail('UNSUPPORTED_FORMAT', 'not an image format Parley converts (PNG, JPEG, WebP, AVIF, GIF, BMP, TIFF, ICO, PNM, QOI)');
  const { format, width, height } = header;
  if (width === undefined || height === undefined) return fail('DECODE_FAILED', `the ${format} header is truncated or malformed`);
  if (width * height > limits.maxPixels)
    return fail('TOO_LARGE', `the image is ${width} × ${height} pixels, more than ${limits.maxPixels}`);

  try {
    if (format === 'gif') {
      const frame = await decodeGifFirstFrame(bytes);
      const jpeg = await Transformer.fromRgbaPixels(frame.rgba, frame.width, frame.height).jpeg(limits.quality);
      return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
    }
    const meta = await new Transformer(bytes).metadata();
    // rotate() with no argument applies the EXIF orientation.
    if (!WITH_ALPHA.has(meta.colorType)) {
      const jpeg = await new Transformer(bytes).rotate().jpeg(limits.quality);
      return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
    }
    // JPEG has no alpha: the encoder would drop it and show whatever colour hides under the
    // transparent pixels. Composite the (rotated) image over an opaque white canvas instead.
    const rotated = await new Transformer(bytes).rotate().png();
    const size = readImageHeader(rotated);
    if (!size?.width || !size.height) throw new Error('rotated PNG without dimensions');
    const white = new Uint8Array(size.width * size.height * 4).fill(255);
    const jpeg = await Transformer.fromRgbaPixels(white, size.width, size.height).overlay(rotated, 0, 0).jpeg(limits.quality);
    return { success: true, dataUrl: toDataUrl(jpeg), originalFormat: format };
  } catch (err) {
    return fail('DECODE_FAILED', `the ${format} image could not be decoded: ${(err as Error).message ?? String(err)}`);
  }
}

const toDataUrl = (jpeg: Uint8Array) => `data:image/jpeg;base64,${Buffer.from(jpeg).toString('base64')}`;
