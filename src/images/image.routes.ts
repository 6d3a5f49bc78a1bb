import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { convertImageToJpeg } from './convert';

const Success = t.Object({ success: t.Literal(true), dataUrl: t.String(), originalFormat: t.String() });
const Failure = t.Object({
  success: t.Literal(false),
  error: t.Object({
    code: t.Union([t.Literal('INVALID_DATA_URL'), t.Literal('UNSUPPORTED_FORMAT'), t.Literal('DECODE_FAILED'), t.Literal('TOO_LARGE')]),
    message: t.String(),
  }),
});

/**
 * A large conversion leaves ~100 MB behind (the body, its strings, the decoded file, the pixels
 * copied out), much of it in buffers the collector does not weigh by their size, so it grew the
 * heap instead of collecting: 16 queued 12 MP uploads still peaked at 1.0 GB with two converting
 * at a time. A full collection once the answer is out (8–17 ms on the event loop) brings that to
 * 0.37 GB, and 269 MB with one at a time (docs/extras.md). Small images are not worth the pause.
 */
const COLLECT_AFTER_CHARS = 256 * 1024;
const collectGarbage = () => Bun.gc(true);

export const imageOperations = [
  defineOperation({
    path: 'images/convertImage',
    summary: 'Convert an image data URL to JPEG',
    description:
      'Accepts PNG, JPEG, WebP, AVIF, GIF (first frame), BMP, TIFF, ICO, PNM and QOI, recognised by their bytes (the data URL\'s media type is not trusted). ' +
      'EXIF orientation is applied and transparency is flattened onto white. Conversion failures are answered with HTTP 200 and ' +
      '`{success: false, error: {code, message}}`, `code` one of `INVALID_DATA_URL`, `UNSUPPORTED_FORMAT`, `DECODE_FAILED`, `TOO_LARGE` ' +
      '(over `PARLEY_IMAGE_MAX_BYTES`, or over `PARLEY_IMAGE_MAX_PIXELS` as the image header declares it, checked before decoding). ' +
      'At most `PARLEY_IMAGE_CONCURRENCY` conversions run at once (default 2); the others wait their turn, in order.',
    input: t.Object({ dataUrl: t.String() }),
    output: t.Union([Success, Failure]),
    // Requests queue before their body is read: a waiting upload holds little more than its socket.
    turns: (deps) => deps.imageConversions,
    handler: async ({ input, deps }) => {
      const result = await convertImageToJpeg(input.dataUrl, {
        maxBytes: deps.config.imageMaxBytes,
        maxPixels: deps.config.imageMaxPixels,
        quality: deps.config.imageJpegQuality,
      });
      if (input.dataUrl.length >= COLLECT_AFTER_CHARS) setImmediate(collectGarbage);
      return result;
    },
  }),
];
