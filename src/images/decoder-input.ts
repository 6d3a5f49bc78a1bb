import { decodeGifInWorker } from './decode-gif-in-worker';
import { stripIcoChunks, stripPngChunks } from './strip-compressed-chunks';
import type { SniffedFormat } from './image-header';

/**
 * The bytes the codec decodes for an image of `format`: a GIF's first frame decoded in a worker
 * (as a PPM), a PNG or ICO without its compressed metadata chunks (decompression bombs the
 * codec would inflate), anything else as it is. Shared by images/convertImage and file uploads.
 * `gifMaxSide`: a GIF's frame shrunk to fit, for a caller that wants a small picture of it only.
 */
export async function decoderInput(bytes: Uint8Array, format: SniffedFormat, gifMaxSide?: number): Promise<Uint8Array | { error: string }> {
  if (format === 'gif') {
    const gif = await decodeGifInWorker(bytes, gifMaxSide);
    return 'error' in gif ? { error: `the gif image could not be decoded: ${gif.error}` } : gif.ppm;
  }
  if (format === 'png') return stripPngChunks(bytes);
  if (format === 'ico') return stripIcoChunks(bytes);
  return bytes;
}
