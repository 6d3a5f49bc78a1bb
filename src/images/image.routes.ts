import { t } from 'elysia';
import { IMAGE_BODY_BYTES, defineOperation } from '../http/operation';
import { convertImageToJpeg } from './convert';

const Success = t.Object({ success: t.Literal(true), dataUrl: t.String(), originalFormat: t.String() });
const Failure = t.Object({
  success: t.Literal(false),
  error: t.Object({
    code: t.Union([t.Literal('INVALID_DATA_URL'), t.Literal('UNSUPPORTED_FORMAT'), t.Literal('DECODE_FAILED'), t.Literal('TOO_LARGE')]),
    message: t.String(),
  }),
});

export const imageOperations = [
  defineOperation({
    path: 'images/convertImage',
    summary: 'Convert an image data URL to JPEG',
    description:
      'Accepts PNG, JPEG, WebP, AVIF, GIF (first frame), BMP, TIFF, ICO, PNM and QOI, recognised by their bytes (the data URL\'s media type is not trusted). ' +
      'EXIF orientation is applied (JPEG and TIFF) and transparency is flattened onto white. Conversion failures are answered with HTTP 200 and ' +
      '`{success: false, error: {code, message}}`, `code` one of `INVALID_DATA_URL`, `UNSUPPORTED_FORMAT`, `DECODE_FAILED`, `TOO_LARGE` ' +
      '(over `PARLEY_IMAGE_MAX_BYTES`, or over `PARLEY_IMAGE_MAX_PIXELS` as the image header declares it, checked before decoding; pixels of 16-bit channels count twice). ' +
      'At most `PARLEY_IMAGE_CONCURRENCY` conversions run at once (default 1); the others wait their turn, in order.',
    input: t.Object({ dataUrl: t.String() }),
    output: t.Union([Success, Failure]),
    // Requests queue once their body is received, before it is decoded: a waiting upload holds its bytes only.
    turns: (deps) => deps.imageConversions,
    maxBodyBytes: IMAGE_BODY_BYTES,
    handler: ({ input, deps }) =>
      convertImageToJpeg(
        input.dataUrl,
        { maxBytes: deps.config.imageMaxBytes, maxPixels: deps.config.imageMaxPixels, quality: deps.config.imageJpegQuality },
        deps.imageOpacity,
      ),
  }),
];
