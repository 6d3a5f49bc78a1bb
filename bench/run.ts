/**
 * Parley's benchmarks: every hot path against its physical floor, measured in the same run.
 *
 *   node_modules/.bin/bun run bench/run.ts [--quick] [--only write,read,...] [--tool wrk|autocannon] [--no-build]
 *
 * Builds dist/parley, runs each figure (each starts its own servers on 127.0.0.1 with temporary
 * data), prints a table, writes bench/results/latest.json and, after a full run, the table in
 * bench/RESULTS.md. A figure whose operation is not in this build says "skipped". Exits non-zero
 * only when the bench cannot run at all (no binary, no load generator).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { BenchContext, Figure } from './lib/context';
import { killAllChildren } from './lib/proc';
import { useRunTempDir } from '../scripts/lib/run-temp-dir';
import { describeMachine, formatTable, loadNow, updateResultsFile, type Row, type RunRecord, headCommit } from './lib/report';
import { chooseLoadTool, ensureBenchPackages } from './lib/setup';
import { writeFigure } from './figures/write';
import { readFigure } from './figures/read';
import { fanoutFigure } from './figures/fanout';
import { researchFigure } from './figures/research';
import { imagesFigure } from './figures/images';
import { footprintFigure } from './figures/footprint';
import { realModelFigure } from './figures/real-model';
import { webFigure } from './figures/web';
import { v1RealModelFigure } from './figures/v1-real-model';

const figures: Figure[] = [writeFigure, readFigure, fanoutFigure, researchFigure, imagesFigure, footprintFigure, realModelFigure, webFigure, v1RealModelFigure];

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    tool: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(`usage: bun run bench/run.ts [--quick] [--only ${figures.map((f) => f.id).join(',')}] [--tool wrk|autocannon] [--no-build]`);
  process.exit(0);
}

const benchDir = import.meta.dir;
const root = join(benchDir, '..');
const log = (m: string) => console.error(`[bench] ${m}`);
const only = values.only ? values.only.split(',').map((s) => s.trim()) : null;
const unknown = only?.filter((id) => !figures.some((f) => f.id === id || f.title.startsWith(`${id} `)));
if (unknown?.length) {
  console.error(`unknown figure(s): ${unknown.join(', ')}; known: ${figures.map((f) => f.id).join(', ')}`);
  process.exit(2);
}
const selected = figures.filter((f) => !only || only.some((id) => f.id === id || f.title.startsWith(`${id} `)));

for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    killAllChildren();
    process.exit(130);
  });

// Servers' data directories, logs and load scripts: removed when the bench exits.
useRunTempDir('parley-bench-run', { keepOnFailure: true });
const startedAt = new Date();
const loadAtStart = loadNow();
const t0 = performance.now();
let ctx: BenchContext;
try {
  ensureBenchPackages(benchDir, log);
  const loadTool = chooseLoadTool(benchDir, values.tool, log);
  const bin = join(root, 'dist', 'parley');
  if (!values['no-build']) {
    log('building dist/parley');
    const b = Bun.spawnSync([process.execPath, 'run', 'scripts/build.ts'], { cwd: root, stdout: 'ignore', stderr: 'inherit' });
    if (b.exitCode !== 0) throw new Error('the build failed');
  }
  ctx = {
    root,
    benchDir,
    bin,
    quick: values.quick!,
    loadTool,
    loadSeconds: values.quick ? 2 : 5,
    rounds: values.quick ? 1 : 2,
    raw: {},
    log: (m) => log(`  ${m}`),
  };
} catch (err) {
  console.error(`bench cannot run: ${(err as Error).message}`);
  process.exit(1);
}

const rows: Row[] = [];
for (const figure of selected) {
  const f0 = performance.now();
  log(`figure ${figure.title}`);
  try {
    rows.push(...(await figure.run(ctx)));
  } catch (err) {
    // One figure failing (a crash, an error answer) is a result too; the others still run.
    log(`figure ${figure.title} failed: ${(err as Error).stack ?? err}`);
    rows.push({ figure: figure.title, measure: '(whole figure)', skipped: `failed: ${(err as Error).message.split('\n')[0]}` });
  } finally {
    killAllChildren();
  }
  log(`figure ${figure.title} done in ${((performance.now() - f0) / 1000).toFixed(0)} s`);
}

const commit = headCommit(root);
const run: RunRecord = {
  startedAt: startedAt.toISOString(),
  durationS: (performance.now() - t0) / 1000,
  mode: ctx.quick ? 'quick' : 'full',
  only,
  commit,
  machine: describeMachine(ctx.loadTool, loadAtStart),
  rows,
  raw: ctx.raw,
};
console.log(`\n${formatTable(rows)}\n`);
console.log(`load average ${run.machine.loadAverage.join(' → ')} on ${run.machine.cores} cores${run.machine.loadAverage[0] > run.machine.cores ? ': a busy machine, read the ratios, not the absolute numbers' : ''}`);
mkdirSync(join(benchDir, 'results'), { recursive: true });
writeFileSync(join(benchDir, 'results', 'latest.json'), JSON.stringify(run, null, 2) + '\n');
log(`wrote bench/results/latest.json (${run.durationS.toFixed(0)} s)`);
if (!ctx.quick && !only) {
  updateResultsFile(join(benchDir, 'RESULTS.md'), run);
  log('updated bench/RESULTS.md');
}
process.exit(0);
