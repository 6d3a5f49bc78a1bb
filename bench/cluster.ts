/**
 * Parley's scale-out figures: several instances of the compiled binary on one PostgreSQL.
 *
 *   node_modules/.bin/bun run bench/cluster.ts [--quick] [--only store,fanout,takeover] [--binary PATH]
 *
 * 1. One instance: the write and read of bench/run.ts on PostgreSQL against SQLite.
 * 2. Fan-out: 1,000 group subscribers over three instances against all on one, with the cluster
 *    bus over PostgreSQL LISTEN/NOTIFY, then over Redis.
 * 3. Takeover: a chat turn's instance SIGKILLed, time until its stream (followed on another
 *    instance) ends; three times.
 * Builds the binary into the run's temporary directory (or takes --binary), starts a throwaway
 * PostgreSQL (test/support/postgres.ts), Redis (test/support/redis.ts) and the fake OpenAI server
 * (test/fakes/openai.ts), all on 127.0.0.1. Prints a table, writes bench/results/cluster.json
 * and, after a full run (not --quick, not --only), its section of bench/RESULTS.md. ~3.5 minutes
 * on 2 shared cores, the build included.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PG_BIN, startPostgres, type TestPostgres } from '../test/support/postgres';
import { REDIS_SERVER, startRedis, type TestRedis } from '../test/support/redis';
import { startFakeOpenAI, type FakeOpenAI } from '../test/fakes/openai';
import { useRunTempDir } from '../scripts/lib/run-temp-dir';
import type { BenchContext } from './lib/context';
import { createDatabase, startInstances, type InstanceSet } from './lib/cluster';
import { killAllChildren } from './lib/proc';
import { describeMachine, formatTable, loadNow, updateResultsFile, type Row, type RunRecord, type Section, headCommit } from './lib/report';
import { chooseLoadTool } from './lib/setup';
import { storeFigure } from './figures/cluster-store';
import { clusterFanoutFigure } from './figures/cluster-fanout';
import { takeoverFigure } from './figures/cluster-takeover';

const FIGURES = ['store', 'fanout', 'takeover'];
const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    binary: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(`usage: bun run bench/cluster.ts [--quick] [--only ${FIGURES.join(',')}] [--binary PATH]`);
  process.exit(0);
}
const only = values.only ? values.only.split(',').map((s) => s.trim()) : null;
if (only?.some((id) => !FIGURES.includes(id))) {
  console.error(`unknown figure(s): ${only.filter((id) => !FIGURES.includes(id)).join(', ')}; known: ${FIGURES.join(', ')}`);
  process.exit(2);
}
const wanted = (id: string) => !only || only.includes(id);

const benchDir = import.meta.dir;
const root = join(benchDir, '..');
const log = (m: string) => console.error(`[cluster] ${m}`);
const SECTION: Section = {
  marker: 'cluster',
  script: 'bench/cluster.ts',
  names: { parley: 'Scaled out', baseline: 'Compared with' },
};

let pg: TestPostgres | undefined;
let redis: TestRedis | undefined;
let fake: FakeOpenAI | undefined;
const sets: InstanceSet[] = [];
/** Everything the run started; the servers first, then what they use. */
async function stopAll() {
  killAllChildren();
  await Promise.all(sets.map((s) => s.stop()));
  fake?.stop();
  await redis?.stop();
  await pg?.stop();
}
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    // pg_ctl stop runs synchronously inside stop(): the cluster's directory goes with it.
    void stopAll();
    process.exit(130);
  });

const { dir: tempDir } = useRunTempDir('parley-bench-cluster', { keepOnFailure: true });
const startedAt = new Date();
const loadAtStart = loadNow();
const t0 = performance.now();
let ctx: BenchContext;
try {
  if (!PG_BIN) throw new Error('no PostgreSQL 15+ under /usr/lib/postgresql (apt-get install postgresql, or set PARLEY_PG_BIN)');
  if (!REDIS_SERVER) throw new Error('no redis-server (apt-get install redis-server, or set PARLEY_REDIS_SERVER)');
  const loadTool = chooseLoadTool(benchDir, undefined, log);
  let bin = values.binary;
  if (!bin) {
    bin = join(tempDir, 'parley');
    log('building the binary');
    const b = Bun.spawnSync([process.execPath, 'run', 'scripts/build.ts', '--outfile', bin], { cwd: root, stdout: 'ignore', stderr: 'inherit' });
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
/** One section: its rows, or one row saying why it failed (the others still run). */
async function section(title: string, run: () => Promise<Row[]>) {
  const s0 = performance.now();
  log(title);
  try {
    rows.push(...(await run()));
  } catch (err) {
    log(`${title} failed: ${(err as Error).stack ?? err}`);
    rows.push({ figure: title, measure: '(whole figure)', skipped: `failed: ${(err as Error).message.split('\n')[0]}` });
  }
  log(`${title} done in ${((performance.now() - s0) / 1000).toFixed(0)} s`);
}

/** Three instances on a new database `name` of the run's PostgreSQL (the bus over it, unless `extra` names a Redis). */
async function cluster(name: string, extra: Record<string, string> = {}): Promise<InstanceSet> {
  const url = await createDatabase(pg!.url, name);
  const set = await startInstances(ctx.bin, join(tempDir, name), 3, {
    PARLEY_DATABASE_URL: url,
    // The default, said aloud: three pools, three listening connections and the CLI stay within
    // the throwaway server's 50 connections.
    PARLEY_DATABASE_POOL: '10',
    PARLEY_AI_PROVIDER: 'openai-chat',
    PARLEY_AI_BASE_URL: fake!.url,
    PARLEY_AI_API_KEY: 'fake',
    PARLEY_AI_MODEL: 'fake-model',
    PARLEY_RESEARCH_MODEL: 'fake-model',
    ...extra,
  });
  sets.push(set);
  return set;
}

try {
  [pg, redis] = await Promise.all([startPostgres(), wanted('fanout') ? startRedis() : undefined]);
  fake = startFakeOpenAI();
  if (wanted('store')) await section('1 one instance: PostgreSQL against SQLite', async () => storeFigure(ctx, await createDatabase(pg!.url, 'one_instance')));
  if (wanted('fanout') || wanted('takeover')) {
    // One cluster for both: the bus over PostgreSQL, the default.
    let set: InstanceSet | undefined;
    const start = async () => (set ??= await cluster('bus_postgres'));
    if (wanted('fanout')) await section('2 fan-out, bus over PostgreSQL', async () => clusterFanoutFigure(ctx, await start(), 'PostgreSQL NOTIFY'));
    if (wanted('takeover'))
      await section('3 takeover', async () => {
        const s = await start();
        return takeoverFigure(ctx, s, fake!, s.env.PARLEY_DATABASE_URL!);
      });
    await (set as InstanceSet | undefined)?.stop();
  }
  if (wanted('fanout'))
    await section('2 fan-out, bus over Redis', async () => {
      const set = await cluster('bus_redis', { PARLEY_REDIS_URL: redis!.url });
      try {
        return await clusterFanoutFigure(ctx, set, 'Redis');
      } finally {
        await set.stop();
      }
    });
} finally {
  await stopAll();
}

const commit = headCommit(root);
const order = (r: Row) => Number.parseInt(r.figure, 10);
rows.sort((a, b) => order(a) - order(b));
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
console.log(`\n${formatTable(rows, SECTION.names)}\n`);
console.log(`load average ${run.machine.loadAverage.join(' → ')} on ${run.machine.cores} cores${run.machine.loadAverage[0] > run.machine.cores ? ': a busy machine, read the ratios, not the absolute numbers' : ''}`);
mkdirSync(join(benchDir, 'results'), { recursive: true });
writeFileSync(join(benchDir, 'results', 'cluster.json'), JSON.stringify(run, null, 2) + '\n');
log(`wrote bench/results/cluster.json (${run.durationS.toFixed(0)} s)`);
if (!ctx.quick && !only) {
  updateResultsFile(join(benchDir, 'RESULTS.md'), run, SECTION);
  log('updated bench/RESULTS.md');
}
process.exit(0);
