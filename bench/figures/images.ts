/**
 * Figure 5, images: `images/convertImage` on a 12 MP PNG and a 4 MP WebP, timed by the client
 * (request to answer, the data URL both ways included), against baseline (c): the same
 * @napi-rs/image transcode called in-process (target: overhead ≤ 10 %), and beside it sharp.
 */
import { makeTestImages, napiTranscode, sharpTranscoder, timeMedian } from '../baseline/images';
import { fmtMs, type BenchContext, type Figure } from '../lib/context';
import { operationExists, startParley } from '../lib/parley';
import type { Row } from '../lib/report';

const MAX_OVERHEAD = 0.1;
/** Parley's default JPEG quality (PARLEY_IMAGE_JPEG_QUALITY); the baselines use the same. */
const QUALITY = 85;

export const imagesFigure: Figure = {
  id: 'images',
  title: '5 images',
  async run(ctx: BenchContext): Promise<Row[]> {
    const figure = '5 images';
    const runs = ctx.quick ? 2 : 5;
    ctx.log('test images (made once per machine)');
    const images = await makeTestImages();
    const sharp = await sharpTranscoder(QUALITY);
    const parley = await startParley(ctx.bin, { PARLEY_IMAGE_JPEG_QUALITY: String(QUALITY) });
    try {
      const available = await operationExists(parley, 'images/convertImage');
      const post = (body: string) => parley.send('images/convertImage', body);
      const measured = [];
      for (const image of images) {
        const mb = (image.bytes.length / 2 ** 20).toFixed(1);
        ctx.log(`${image.name} (${mb} MB): @napi-rs/image, Parley; median of ${runs}`);
        const napiMs = await timeMedian(runs, () => napiTranscode(QUALITY)(image.bytes));
        if (!available) {
          measured.push({ image, mb, napiMs });
          continue;
        }
        const dataUrl = `data:image/${image.format};base64,${image.bytes.toString('base64')}`;
        // Serialised once: the client's JSON.stringify of 13 MB is not the server's time.
        const body = JSON.stringify({ dataUrl });
        let answer: any;
        const parleyMs = await timeMedian(runs, async () => {
          const res = await post(body);
          answer = await res.json().catch(() => undefined);
          if (res.status !== 200 || !answer?.success) throw new Error(`convertImage answered ${res.status}: ${JSON.stringify(answer).slice(0, 200)}`);
        });
        // What the data URL's round trip costs before any image work: the same data URL as an
        // array (a wrong type; an unknown field would be accepted), refused by validation after it
        // was sent, read and parsed. The in-process baseline pays none of it.
        const refused = JSON.stringify({ dataUrl: [dataUrl] });
        const transportMs = await timeMedian(runs, async () => {
          const res = await post(refused);
          await res.arrayBuffer();
          if (res.status !== 400) throw new Error(`a data URL in an array answered ${res.status}`);
        });
        measured.push({ image, mb, napiMs, parley: { parleyMs, transportMs, originalFormat: answer.originalFormat as string, outputChars: answer.dataUrl.length as number } });
      }
      // sharp last, for every image: libvips keeps working in the background for a second or two
      // after its calls (Parley's next requests took up to 1.3 × as long), and it is a reference only.
      const rows: Row[] = [];
      const raw: Record<string, unknown> = {};
      for (const { image, mb, napiMs, parley: p } of measured) {
        if (sharp) ctx.log(`${image.name}: sharp; median of ${runs}`);
        const sharpMs = sharp ? await timeMedian(runs, () => sharp(image.bytes)) : undefined;
        const vsSharp = sharpMs ? `; sharp ${fmtMs(sharpMs)} (@napi-rs/image / sharp ${(napiMs / sharpMs).toFixed(2)})` : '; sharp not installed';
        if (!p) {
          rows.push({ figure, measure: `baseline (c) alone: ${image.name} (${mb} MB) to JPEG`, baseline: fmtMs(napiMs), detail: `in-process @napi-rs/image${vsSharp}` });
          raw[image.name] = { napiMs, sharpMs };
          continue;
        }
        const overhead = p.parleyMs / napiMs - 1;
        raw[image.name] = { napiMs, sharpMs, ...p };
        rows.push({
          figure,
          measure: `convertImage ${image.name} (${mb} MB)`,
          parley: fmtMs(p.parleyMs),
          baseline: fmtMs(napiMs),
          ratio: p.parleyMs / napiMs,
          target: `≤ ${(1 + MAX_OVERHEAD).toFixed(2)}`,
          met: overhead <= MAX_OVERHEAD,
          detail: `overhead ${(overhead * 100).toFixed(0)} % over in-process @napi-rs/image, of which ${((p.transportMs / napiMs) * 100).toFixed(0)} % is the request's transport (${fmtMs(p.transportMs)}: the same body refused by validation)${vsSharp}; Parley / sharp ${sharpMs ? (p.parleyMs / sharpMs).toFixed(2) : '?'}`,
        });
      }
      if (!available) rows.push({ figure, measure: 'convertImage', skipped: 'operation not available: images/convertImage' });
      ctx.raw.images = raw;
      return rows;
    } finally {
      await parley.stop();
    }
  },
};
