// The compiled binary's peak memory (VmHWM) on the heaviest image paths, run after run, each
// scenario on a fresh server on default settings: what test/image-memory-binary.test.ts and
// scripts/fault/bombs.ts bound at 300 MB.
//
//   bun run bench/image-memory.ts --runs 5 BINARY [BINARY...]
//
// The binaries take turns for each scenario and run, so the machine's load falls on all of them
// alike. Prints one JSON line per measurement, then min, median and max per binary and scenario,
// and the idle RSS (1 s after start) they all start from.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { whitePng, zeroPng } from '../test/support/image-bombs';
import { animatedGifBomb } from '../scripts/lib/hostile-payloads';
import { testConfig } from '../src/config';
import { waitForListening } from '../scripts/lib/wait-for-listening';

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), options: { runs: { type: 'string', default: '5' }, only: { type: 'string', default: '' } }, allowPositionals: true });
const runs = Number(values.runs);
const side = Math.floor(Math.sqrt(testConfig().imageMaxPixels));
const half = Math.floor(side / Math.SQRT2);

const tiny = zeroPng();
const transparent = zeroPng({ width: side, height: side, colorType: 6 });
const opaque = whitePng(side, side);
const deepHalf = zeroPng({ width: half, height: half, colorType: 4, bitDepth: 16 });
const frames = animatedGifBomb(side, side, 200);

type Step = { convert: Uint8Array[] } | { upload: { name: string; bytes: Uint8Array }[] };
/** Each scenario: its steps in order, the requests of one step at once. */
const scenarios: Record<string, Step[]> = {
  // The test's case: the codec loaded by a small image first, then the transparent one (flattened).
  'convert transparent RGBA': [{ convert: [tiny] }, { convert: [transparent] }],
  // The codec loaded by the large image itself.
  'convert transparent RGBA, first image': [{ convert: [transparent] }],
  // An opaque image after an opaque one: its encode starts beside the alpha check (opacity-guess.ts).
  'convert opaque RGBA after an opaque one': [{ convert: [opaque] }, { convert: [opaque] }],
  // A transparent image after an opaque one: the early encode is thrown away, then it is flattened.
  'convert transparent RGBA after an opaque one': [{ convert: [opaque] }, { convert: [transparent] }],
  '16-bit grey + alpha at half the pixels': [{ convert: [tiny] }, { convert: [deepHalf] }],
  'convert four transparent RGBA at once': [{ convert: [tiny] }, { convert: [transparent, transparent, transparent, transparent] }],
  'upload transparent RGBA PNG': [{ upload: [{ name: 'zeros.png', bytes: transparent }] }],
  'upload 200-frame GIF': [{ upload: [{ name: 'frames.gif', bytes: frames }] }],
  'upload four transparent RGBA PNGs at once': [{ upload: Array.from({ length: 4 }, () => ({ name: 'zeros.png', bytes: transparent })) }],
};

const mb = (status: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) / 1024;

async function measure(bin: string, steps: Step[]): Promise<{ idleRss: number; peak: number }> {
  const home = mkdtempSync(join(tmpdir(), 'parley-img-bench-'));
  const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: join(home, 'data') };
  try {
    if (Bun.spawnSync([bin, 'user', 'create', '--email', 'ann@example.org'], { env }).exitCode !== 0) throw new Error('user create failed');
    const key = JSON.parse(Bun.spawnSync([bin, 'apikey', 'create', '--email', 'ann@example.org', '--json'], { env }).stdout.toString()).key as string;
    const proc = Bun.spawn([bin, 'serve', '--port', '0'], { env, stdout: 'pipe', stderr: 'ignore' });
    try {
      const url = await waitForListening(proc);
      void proc.stdout.pipeTo(new WritableStream()).catch(() => undefined);
      const status = () => readFileSync(`/proc/${proc.pid}/status`, 'utf8');
      const convert = async (bytes: Uint8Array) => {
        const body = JSON.stringify({ dataUrl: `data:application/octet-stream;base64,${Buffer.from(bytes).toString('base64')}` });
        const res = await fetch(`${url}/api/images/convertImage`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });
        const answer = (await res.json()) as { success: boolean };
        if (!answer.success) throw new Error(`conversion failed: ${JSON.stringify(answer)}`);
      };
      const upload = async (file: { name: string; bytes: Uint8Array }) => {
        const form = new FormData();
        form.append('file', new Blob([file.bytes]), file.name);
        const res = await fetch(`${url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
        if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      };
      await fetch(`${url}/api/health`);
      await Bun.sleep(1000);
      const idleRss = mb(status(), 'VmRSS');
      for (const step of steps) {
        if ('convert' in step) await Promise.all(step.convert.map(convert));
        else await Promise.all(step.upload.map(upload));
      }
      return { idleRss, peak: mb(status(), 'VmHWM') };
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const all: { binary: string; scenario: string; idleRss: number; peak: number }[] = [];
for (let i = 0; i < runs; i++)
  for (const [scenario, steps] of Object.entries(scenarios)) {
    if (!scenario.includes(values.only)) continue;
    for (const binary of positionals) {
      const run = { binary, scenario, ...(await measure(binary, steps)) };
      all.push(run);
      console.log(JSON.stringify({ ...run, idleRss: Math.round(run.idleRss), peak: Math.round(run.peak) }));
    }
  }

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const summary = (xs: number[]) => `${Math.min(...xs).toFixed(0)} / ${median(xs).toFixed(0)} / ${Math.max(...xs).toFixed(0)}`;
console.log('\npeak RSS, MB (min / median / max)');
for (const scenario of Object.keys(scenarios)) {
  const mine = all.filter((r) => r.scenario === scenario);
  if (mine.length) console.log(`${scenario}: ${positionals.map((b) => `${summary(mine.filter((r) => r.binary === b).map((r) => r.peak))}`).join('  |  ')}`);
}
console.log(`idle RSS: ${positionals.map((b) => summary(all.filter((r) => r.binary === b).map((r) => r.idleRss))).join('  |  ')}`);
