import { loadCodec } from '../images/load-codec';
import { parseDataUrl } from '../images/convert';
import { readImageHeader } from '../images/image-header';
import { decoderInput } from '../images/decoder-input';
import { decodeBetweenCollections } from '../images/collect-around-decode';

/** An avatar's side in pixels: twice the largest it is shown (64 px), for sharp screens. */
export const AVATAR_SIDE = 128;
/** The stored WebP's largest size; a 128 px square at this quality is a few kilobytes. */
export const AVATAR_MAX_BYTES = 64 * 1024;
const QUALITY = 85;

/** The image decoder's lower-case phrase as a sentence a person reads. */
const sentence = (phrase: string) => `${phrase[0]!.toUpperCase()}${phrase.slice(1)}.`;

export interface AvatarLimits {
  maxBytes: number;
  maxPixels: number;
}

/**
 * An uploaded image as an avatar: a 128 px square WebP, cropped to its middle, the EXIF
 * orientation applied. Refused the way image uploads are (docs/files.md): over the byte limit from
 * the data URL's length, over the pixel limit from the header before decoding, PNG and ICO
 * metadata chunks (decompression bombs) stripped, a GIF's first frame decoded in a worker.
 */
export async function makeAvatar(dataUrl: string, limits: AvatarLimits): Promise<{ webp: Uint8Array } | { error: string }> {
  const bytes = parseDataUrl(dataUrl, limits.maxBytes);
  if (!(bytes instanceof Uint8Array)) return { error: sentence(bytes.success ? 'the image could not be read' : bytes.error.message) };
  if (bytes.length === 0) return { error: 'The image is empty.' };
  if (bytes.length > limits.maxBytes) return { error: `The image is larger than ${limits.maxBytes} bytes.` };
  const header = readImageHeader(bytes);
  if (!header) return { error: 'This is not an image Parley reads (PNG, JPEG, WebP, AVIF, GIF, BMP, TIFF, ICO, PNM, QOI).' };
  const { format, width, height, channelBytes } = header;
  if (width === undefined || height === undefined) return { error: `The ${format} image's header is truncated or malformed.` };
  if (width * height * channelBytes > limits.maxPixels) return { error: `The image is ${width} × ${height} pixels, more than ${limits.maxPixels}.` };
  return decodeBetweenCollections(width * height, async () => {
    const { Transformer, ResizeFit, ResizeFilterType } = await loadCodec();
    // A GIF's frame is shrunk in its worker already: an avatar needs no more than its side.
    const input = await decoderInput(bytes, format, AVATAR_SIDE * 2);
    if (!(input instanceof Uint8Array)) return { error: `The image could not be decoded: ${input.error}.` };
    try {
      const t = new Transformer(input);
      const meta = await t.metadata(true);
      const oriented = (meta.orientation ?? 1) > 1 ? t.rotate() : t;
      const webp = await oriented.resize({ width: AVATAR_SIDE, height: AVATAR_SIDE, fit: ResizeFit.Cover, filter: ResizeFilterType.Lanczos3 }).webp(QUALITY);
      if (webp.length > AVATAR_MAX_BYTES) return { error: 'The avatar came out too large; try a simpler image.' };
      return { webp: new Uint8Array(webp) };
    } catch (err) {
      return { error: `The ${format} image could not be decoded: ${(err as Error).message ?? String(err)}.` };
    }
  });
}
