import { loadCodec } from '../images/load-codec';
import { decoderInput } from '../images/decoder-input';
import { decodeBetweenCollections } from '../images/collect-around-decode';
import type { ImageHeader, SniffedFormat } from '../images/image-header';

/** Longest side of a thumbnail, in pixels. */
export const THUMB_SIZE = 256;
/** A GIF's frame is averaged down to this many pixels a side in the decoder, the codec resizes the rest. */
const GIF_THUMB_SOURCE_SIDE = 2 * THUMB_SIZE;

export type CleanedImage = { bytes: Uint8Array; mimeType: string; width: number; height: number; thumb: Uint8Array };

/**
 * An uploaded image, re-encoded from its pixels so that nothing of the original file travels on:
 * no EXIF (a phone photo's GPS position, its camera and owner), no XMP, no comments. JPEG stays
 * JPEG (turned upright by its EXIF orientation first, since that tag goes too), PNG and WebP stay
 * themselves, GIF is kept as sent (its animation would not survive; GIF carries no EXIF), and the
 * rarer formats become PNG. The thumbnail is a WebP (it keeps transparency).
 *
 * The pixel limit is checked on the header before anything is decoded (as images/convertImage
 * does), so a small file declaring a huge image is refused without allocating its pixels.
 */
export async function cleanImage(bytes: Uint8Array, header: ImageHeader, maxPixels: number): Promise<CleanedImage | { error: string }> {
  const { format, width, height, channelBytes } = header;
  if (width === undefined || height === undefined) return { error: `the ${format} header is truncated or malformed` };
  if (width * height * channelBytes > maxPixels) return { error: `the image is ${width} × ${height} pixels, more than ${maxPixels}` };
  return decodeBetweenCollections(width * height, () => reencode(bytes, format, width, height));
}

async function reencode(bytes: Uint8Array, format: SniffedFormat, width: number, height: number): Promise<CleanedImage | { error: string }> {
  const { Transformer, ResizeFit } = await loadCodec();
  // A GIF is kept as sent: only its thumbnail needs pixels, so its frame is decoded small.
  const input = await decoderInput(bytes, format, GIF_THUMB_SOURCE_SIDE);
  if (!(input instanceof Uint8Array)) return input;
  try {
    const source = new Transformer(input);
    const meta = await source.metadata(true);
    const upright = (meta.orientation ?? 1) > 1 ? source.rotate() : source;
    let out: { bytes: Uint8Array; mimeType: string };
    if (format === 'gif') out = { bytes, mimeType: 'image/gif' };
    else if (format === 'jpeg') out = { bytes: await upright.jpeg(90), mimeType: 'image/jpeg' };
    else if (format === 'webp') out = { bytes: await upright.webp(90), mimeType: 'image/webp' };
    else out = { bytes: await upright.png(), mimeType: 'image/png' };
    const [w, h] = format === 'gif' ? [width, height] : (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
    // From the same decode, after the re-encode (which reads it as it is): a Transformer of the
    // re-encoded bytes decoded the image a second time beside the first, 64 MB more for 4096².
    const thumb = await upright.resize({ width: Math.min(THUMB_SIZE, w), height: Math.min(THUMB_SIZE, h), fit: ResizeFit.Inside }).webp(75);
    return { ...out, width: w, height: h, thumb };
  } catch (err) {
    return { error: `the ${format} image could not be decoded: ${(err as Error).message ?? String(err)}` };
  }
}
