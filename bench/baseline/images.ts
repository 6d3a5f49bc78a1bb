/**
 * Baseline (c): the raw in-process transcode to JPEG with @napi-rs/image (what images/convertImage
 * is built on) and with sharp (libvips, the fastest common Node image library), plus the test
 * images: deterministic and photo-like (gradients, texture and grain).
 */
import { FilterType, Transformer } from '@napi-rs/image';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from '../lib/stats';

/**
 * Deterministic RGBA pixels: gradients, a few waves and seeded grain of `grainBits` bits. A 12 MP
 * PNG with photo grain would pass the 20 MiB input limit (real photos are not sent as PNG), so
 * the PNG gets little grain: a screenshot-like image.
 */
function photoPixels(width: number, height: number, grainBits: number): Uint8Array {
  const px = new Uint8Array(width * height * 4);
  let seed = 0x2545f491;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24) - 128;
  const colWave = Float64Array.from({ length: width }, (_, x) => Math.sin(x / 37) * 40);
  const rowWave = Float64Array.from({ length: height }, (_, y) => Math.cos(y / 53));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const wave = colWave[x]! * rowWave[y]!;
      const grain = grainBits ? rand() >> (8 - grainBits) : 0;
      px[i] = (x / width) * 200 + wave + grain + 20;
      px[i + 1] = (y / height) * 180 - wave + grain + 50;
      px[i + 2] = ((x + y) / (width + height)) * 160 + wave / 2 + grain + 50;
      px[i + 3] = 255;
    }
  }
  return px;
}

export interface TestImage {
  name: string;
  format: 'png' | 'webp';
  width: number;
  height: number;
  bytes: Buffer;
}

const specs = [
  { name: '12 MP PNG', format: 'png', width: 4000, height: 3000, grain: 2 },
  { name: '4 MP WebP', format: 'webp', width: 2560, height: 1600, grain: 4 },
] as const;

/** The test images, made once per checkout (a few seconds) and kept in .cache/ (gitignored). */
export async function makeTestImages(): Promise<TestImage[]> {
  const dir = join(import.meta.dir, '..', '..', '.cache', 'bench-images-v1');
  mkdirSync(dir, { recursive: true });
  const out: TestImage[] = [];
  for (const s of specs) {
    const file = join(dir, `${s.width}x${s.height}.${s.format}`);
    if (!existsSync(file)) {
      const t = Transformer.fromRgbaPixels(photoPixels(s.width, s.height, s.grain), s.width, s.height);
      const bytes = s.format === 'png' ? await t.png({ filterType: FilterType.Adaptive }) : await t.webp(90);
      writeFileSync(`${file}.tmp`, bytes);
      renameSync(`${file}.tmp`, file);
    }
    out.push({ name: s.name, format: s.format, width: s.width, height: s.height, bytes: readFileSync(file) });
  }
  return out;
}

export type Transcoder = (input: Buffer) => Promise<Buffer>;

/** @napi-rs/image, the same library Parley uses, called directly and asynchronously. */
export const napiTranscode =
  (quality: number): Transcoder =>
  (input) =>
    new Transformer(input).jpeg(quality);

/** sharp, when bench/node_modules has it. */
export async function sharpTranscoder(quality: number): Promise<Transcoder | undefined> {
  try {
    // sharp lives in bench/node_modules only (bench/package.json), so the main type check does not see it.
    const specifier = 'sharp';
    const { default: sharp } = (await import(specifier)) as { default: (input: Buffer) => any };
    return (input) => sharp(input).flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer();
  } catch {
    return undefined;
  }
}

/** Median milliseconds of `runs` calls after one warm-up. */
export async function timeMedian(runs: number, fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    // The last call's garbage (tens of MB with a 12 MP image) is collected here, not inside the
    // next timed call: the bench process is the client, and its pauses are not the server's.
    Bun.gc(true);
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return median(times);
}
