import { beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { iccpBomb, itxtBomb, plainGif, whitePng, zeroPng, ztxtBomb } from './support/image-bombs';
import { testConfig } from '../src/config';
import { waitForListening } from '../scripts/lib/wait-for-listening';

// Large images on a shared 2-core machine take seconds; no test here asserts on speed.
setDefaultTimeout(120_000);

/**
 * The server's peak resident memory (VmHWM) while it converts hostile images on its default
 * settings must stay under the bound: 300 MB, where a 1 GB board keeps room for the OS
 * and a second conversion. The server itself holds ~95 MB once the codec is loaded; the largest
 * image the default pixel limit allows takes ~130 MB more at its peak (docs/extras.md has the figures).
 */
const PEAK_MB = 300;

/** A loose sanity bound on one /api/health answer while an image converts: nothing blocks the event loop for long. */
const HEALTH_MS = 1500;

const defaults = testConfig();
/** The largest square the default pixel limit lets through, in pixels of 8-bit channels. */
const side = Math.floor(Math.sqrt(defaults.imageMaxPixels));

let bin: string;
beforeAll(async () => {
  bin = await buildBinaryOnce();
});

/** A server of its own for each test, on default settings, so each peak is that test's. */
async function startServer() {
  const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'parley-img-mem-')), 'data') };
  expect(Bun.spawnSync([bin, 'user', 'create', '--email', 'ann@example.org'], { env }).exitCode).toBe(0);
  const key = JSON.parse(Bun.spawnSync([bin, 'apikey', 'create', '--email', 'ann@example.org', '--json'], { env }).stdout.toString()).key as string;
  const proc = Bun.spawn([bin, 'serve', '--port', '0'], { env, stdout: 'pipe', stderr: 'ignore' });
  const url = await waitForListening(proc);
  const server = {
    peakMb: () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) / 1024,
    /** Convert `bytes`, asking /api/health every 10 ms meanwhile; the answer and the slowest health answer. */
    async convert(bytes: Uint8Array): Promise<{ answer: any; worstHealthMs: number }> {
      const body = JSON.stringify({ dataUrl: `data:application/octet-stream;base64,${Buffer.from(bytes).toString('base64')}` });
      let done = false;
      const answer = fetch(`${url}/api/images/convertImage`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body })
        .then((r) => r.json())
        .finally(() => (done = true));
      let worstHealthMs = 0;
      while (!done) {
        const started = performance.now();
        expect((await fetch(`${url}/api/health`)).status).toBe(200);
        worstHealthMs = Math.max(worstHealthMs, performance.now() - started);
        await Bun.sleep(10);
      }
      return { answer: await answer, worstHealthMs };
    },
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
  // The first conversion loads the codec (once per process, ~40 ms of the event loop on an idle
  // machine: src/images/load-codec.ts); the tests measure conversions, not that.
  expect((await server.convert(zeroPng())).answer).toMatchObject({ success: true });
  return server;
}

/** Run `body` against a fresh server and stop it whatever happens. */
async function withServer(body: (server: Awaited<ReturnType<typeof startServer>>) => Promise<void>): Promise<void> {
  const server = await startServer();
  try {
    await body(server);
  } finally {
    await server.stop();
  }
}

describe('image conversion through the compiled binary: memory per conversion is bounded whatever the file says', () => {
  test('a 1×1 PNG whose ICC profile inflates to 300 MB converts, and the server stays under the bound', () =>
    withServer(async (server) => {
      const { answer } = await server.convert(iccpBomb(300_000_000));
      expect(answer).toMatchObject({ success: true, originalFormat: 'png' });
      expect(server.peakMb()).toBeLessThan(PEAK_MB);
    }));

  test('1×1 PNGs whose zTXt and iTXt text inflate to 300 MB convert, and the server stays under the bound', () =>
    withServer(async (server) => {
      for (const bomb of [ztxtBomb(300_000_000), itxtBomb(300_000_000)]) {
        const { answer } = await server.convert(bomb);
        expect(answer).toMatchObject({ success: true, originalFormat: 'png' });
      }
      expect(server.peakMb()).toBeLessThan(PEAK_MB);
    }));

  test('all-zero PNGs of the largest size the default pixel limit allows (8-bit RGBA, 16-bit grey + alpha) convert or are refused, under the bound', () =>
    withServer(async (server) => {
      // Transparent all over: the heaviest path (the whole image is flattened onto white).
      const rgba = await server.convert(zeroPng({ width: side, height: side, colorType: 6 }));
      expect(rgba.answer).toMatchObject({ success: true, originalFormat: 'png' });
      expect(server.peakMb()).toBeLessThan(PEAK_MB);
      // 16-bit channels take twice the memory: at the same size they count twice, so TOO_LARGE.
      const deep = await server.convert(zeroPng({ width: side, height: side, colorType: 4, bitDepth: 16 }));
      expect(deep.answer).toEqual({ success: false, error: { code: 'TOO_LARGE', message: expect.stringContaining(`${side} × ${side} pixels`) } });
      const half = Math.floor(side / Math.SQRT2);
      const deepHalf = await server.convert(zeroPng({ width: half, height: half, colorType: 4, bitDepth: 16 }));
      expect(deepHalf.answer).toMatchObject({ success: true, originalFormat: 'png' });
      expect(server.peakMb()).toBeLessThan(PEAK_MB);
      console.log(`largest PNGs (${side} × ${side}): slowest /api/health ${rgba.worstHealthMs.toFixed(0)} and ${deepHalf.worstHealthMs.toFixed(0)} ms, peak ${server.peakMb().toFixed(0)} MB`);
      expect(Math.max(rgba.worstHealthMs, deepHalf.worstHealthMs)).toBeLessThan(HEALTH_MS);
    }));

  test('the largest RGBA PNGs down every path (opaque with its encode started early, transparent after an opaque one, two at once) stay under the bound', () =>
    withServer(async (server) => {
      const opaque = whitePng(side, side);
      const transparent = zeroPng({ width: side, height: side, colorType: 6 });
      // The first opaque image sets the guess (src/images/opacity-guess.ts); the second's encode
      // then starts beside its alpha check, and the transparent one's is started and thrown away.
      for (const bytes of [opaque, opaque, transparent]) expect((await server.convert(bytes)).answer).toMatchObject({ success: true, originalFormat: 'png' });
      // Two at once take turns (PARLEY_IMAGE_CONCURRENCY): the second starts once the first gave its memory back.
      const answers = await Promise.all([1, 2].map(() => server.convert(transparent)));
      for (const { answer } of answers) expect(answer).toMatchObject({ success: true, originalFormat: 'png' });
      console.log(`largest RGBA PNGs down every path: peak ${server.peakMb().toFixed(0)} MB`);
      expect(server.peakMb()).toBeLessThan(PEAK_MB);
    }));

  test('a GIF of the largest size the default pixel limit allows converts beside a responsive /api/health, under the bound', () =>
    withServer(async (server) => {
      const { answer, worstHealthMs } = await server.convert(plainGif(side, side));
      expect(answer).toMatchObject({ success: true, originalFormat: 'gif' });
      console.log(`largest GIF (${side} × ${side}): slowest /api/health ${worstHealthMs.toFixed(0)} ms, peak ${server.peakMb().toFixed(0)} MB`);
      expect(worstHealthMs).toBeLessThan(HEALTH_MS);
      expect(server.peakMb()).toBeLessThan(PEAK_MB);
    }));
});
