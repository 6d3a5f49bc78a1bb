/**
 * Figure 6, footprint: the size of dist/parley, cold start to the first 200 on /api/health, idle
 * RSS after start, and RSS under the write load. The floor for each is baseline (a) compiled the
 * same way (`bun build --compile`): a Bun runtime with SQLite and nothing of Parley.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmtMB, fmtMs, loadPoint, type BenchContext, type Figure } from '../lib/context';
import { callOperation, createUserWithKey, parleyEnv, startParley, Unavailable } from '../lib/parley';
import { freePort, rssMB, sampleRss, spawnChild, stopChild, waitFor200 } from '../lib/proc';
import type { Row } from '../lib/report';
import { median } from '../lib/stats';

const TARGETS = { sizeMB: 110, startMs: 300, idleMB: 80 };
const IDLE_SETTLE_MS = 1000;

interface Start {
  ms: number;
  idleMB: number;
}

/** Spawn `cmd` (which gets the port appended by `argsFor`), time the first 200, then read the settled RSS. */
async function timeStart(argsFor: (port: number) => string[], env: Record<string, string>, healthPath: string): Promise<Start> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawnChild(argsFor(port), { env, stdout: 'ignore', stderr: 'ignore' });
  try {
    await waitFor200(`http://127.0.0.1:${port}${healthPath}`, 15_000, () => proc.exitCode === null);
    const ms = performance.now() - t0;
    await Bun.sleep(IDLE_SETTLE_MS);
    return { ms, idleMB: rssMB(proc.pid) };
  } finally {
    await stopChild(proc);
  }
}

/** Compile baseline (a) into a single executable: the floor for size, start and memory. */
function compileFloor(ctx: BenchContext, dir: string): string {
  const out = join(dir, 'baseline-write');
  const r = Bun.spawnSync([process.execPath, 'build', '--compile', '--minify-syntax', '--minify-whitespace', join(ctx.benchDir, 'baseline', 'write-server.ts'), '--outfile', out], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  if (r.exitCode !== 0) throw new Error(`could not compile the floor: ${r.stderr.toString()}`);
  return out;
}

/** RSS under the write load: measured by figure 1 when it ran, otherwise a short write load here. */
async function rssUnderWrite(ctx: BenchContext): Promise<{ parley?: number; floor?: number; skipped?: string }> {
  const w = ctx.raw.write as { rssPeakMB?: number; baselineRssPeakMB?: number } | undefined;
  if (w?.rssPeakMB) return { parley: w.rssPeakMB, floor: w.baselineRssPeakMB };
  const parley = await startParley(ctx.bin);
  try {
    const group = await callOperation(parley, 'groupChat/createGroupChat', { name: 'Footprint' });
    const rss = sampleRss(parley.pid);
    await loadPoint(ctx, {
      url: `${parley.url}/api/groupChat/sendGroupMessage`,
      headers: { 'x-api-key': parley.key },
      body: { groupChatId: group.id, message: 'footprint' },
      connections: 32,
    });
    return { parley: rss.stop() };
  } catch (err) {
    if (err instanceof Unavailable) return { skipped: err.message };
    throw err;
  } finally {
    await parley.stop();
  }
}

export const footprintFigure: Figure = {
  id: 'footprint',
  title: '6 footprint',
  async run(ctx: BenchContext): Promise<Row[]> {
    const figure = '6 footprint';
    const dir = mkdtempSync(join(tmpdir(), 'parley-bench-footprint-'));
    const floorBin = compileFloor(ctx, dir);
    const sizeMB = statSync(ctx.bin).size / 2 ** 20;
    const floorMB = statSync(floorBin).size / 2 ** 20;

    // Parley: a data dir prepared by the CLI (migrated, one user), as on a restart.
    const dataDir = join(dir, 'data');
    const env = parleyEnv(dataDir);
    createUserWithKey(ctx.bin, env, 'footprint@example.org');
    const n = ctx.quick ? 3 : 7;
    const parleyStarts: Start[] = [];
    const floorStarts: Start[] = [];
    ctx.log(`${n} cold starts each`);
    for (let i = 0; i < n; i++) {
      parleyStarts.push(await timeStart((port) => [ctx.bin, 'serve', '--host', '127.0.0.1', '--port', String(port)], env, '/api/health'));
      floorStarts.push(await timeStart((port) => [floorBin, String(port), dir], { PATH: process.env.PATH ?? '' }, '/'));
    }
    const firstBoot = await timeStart(
      (port) => [ctx.bin, 'serve', '--host', '127.0.0.1', '--port', String(port)],
      parleyEnv(join(dir, 'empty')),
      '/api/health',
    );
    const startMs = median(parleyStarts.map((s) => s.ms));
    const floorStartMs = median(floorStarts.map((s) => s.ms));
    const idleMB = median(parleyStarts.map((s) => s.idleMB));
    const floorIdleMB = median(floorStarts.map((s) => s.idleMB));
    const write = await rssUnderWrite(ctx);
    ctx.raw.footprint = { sizeMB, floorMB, parleyStarts, floorStarts, firstBoot, rssUnderWrite: write };

    return [
      {
        figure,
        measure: 'dist/parley size (linux-x64)',
        parley: fmtMB(sizeMB),
        baseline: fmtMB(floorMB),
        ratio: sizeMB / floorMB,
        target: `≤ ${TARGETS.sizeMB} MB`,
        met: sizeMB <= TARGETS.sizeMB,
        detail: 'baseline: (a) compiled with bun build --compile',
      },
      {
        figure,
        measure: 'cold start to first 200 on /api/health',
        parley: fmtMs(startMs),
        baseline: fmtMs(floorStartMs),
        ratio: startMs / floorStartMs,
        target: `≤ ${TARGETS.startMs} ms`,
        met: startMs <= TARGETS.startMs,
        detail: `median of ${n}, max ${fmtMs(Math.max(...parleyStarts.map((s) => s.ms)))}; first boot on an empty data dir (migrations) ${fmtMs(firstBoot.ms)}`,
      },
      {
        figure,
        measure: `idle RSS ${IDLE_SETTLE_MS / 1000} s after start`,
        parley: fmtMB(idleMB),
        baseline: fmtMB(floorIdleMB),
        ratio: idleMB / floorIdleMB,
        target: `≤ ${TARGETS.idleMB} MB`,
        met: idleMB <= TARGETS.idleMB,
        detail: `median of ${n}`,
      },
      write.parley
        ? {
            figure,
            measure: 'peak RSS under the write load (32 conn)',
            parley: fmtMB(write.parley),
            ...(write.floor ? { baseline: fmtMB(write.floor), ratio: write.parley / write.floor } : {}),
            target: 'reported',
            detail: write.floor ? 'baseline: (a) under the same load' : 'sendGroupMessage, short load',
          }
        : { figure, measure: 'peak RSS under the write load', skipped: write.skipped },
    ];
  },
};
