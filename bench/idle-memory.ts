// The compiled server's memory at idle: `parley serve` on a fresh data dir, right after
// /api/health answers and again after one authenticated request (preferences/get with an API key
// made by the binary's own CLI). Builds nothing: build first (`bun run scripts/build.ts`).
//
//   bun run bench/idle-memory.ts [--runs 7] [BINARY...]   (default: dist/parley)
//
// With several binaries (e.g. a build of the base commit beside dist/parley) they take turns run
// after run, so the machine's load falls on all alike; the ratios against the first are what to
// quote (bench/RESULTS.md). Prints one JSON line per run, then the medians per binary.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './lib/stats';
import { waitForListening } from '../scripts/lib/wait-for-listening';

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), options: { runs: { type: 'string', default: '7' } }, allowPositionals: true });
const runs = Number(values.runs);
const binaries = positionals.length ? positionals : [join(import.meta.dir, '..', 'dist', 'parley')];

const FIELDS = ['VmRSS', 'RssAnon', 'RssFile'] as const;
type Memory = Record<(typeof FIELDS)[number], number>;
interface Run {
  started: Memory;
  afterRequest: Memory;
}

function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) / 1024;
  return Object.fromEntries(FIELDS.map((f) => [f, mb(f)])) as Memory;
}

async function measure(bin: string): Promise<Run> {
  const home = mkdtempSync(join(tmpdir(), 'parley-idle-bench-'));
  const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: join(home, 'data') };
  try {
    if (Bun.spawnSync([bin, 'user', 'create', '--email', 'ann@example.org'], { env }).exitCode !== 0) throw new Error(`${bin}: user create failed`);
    const key = JSON.parse(Bun.spawnSync([bin, 'apikey', 'create', '--email', 'ann@example.org', '--json'], { env }).stdout.toString()).key as string;
    const proc = Bun.spawn([bin, 'serve', '--port', '0'], { env, stdout: 'pipe', stderr: 'ignore' });
    try {
      const url = await waitForListening(proc);
      void proc.stdout.pipeTo(new WritableStream()).catch(() => undefined);
      const health = await fetch(`${url}/api/health`);
      if (health.status !== 200) throw new Error(`${bin}: /api/health answered ${health.status}`);
      // What the server holds once started, not the moment's garbage of its start.
      await Bun.sleep(1000);
      const started = memoryOf(proc.pid);
      const answer = await fetch(`${url}/api/preferences/get`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{}' });
      if (answer.status !== 200) throw new Error(`${bin}: preferences/get answered ${answer.status}`);
      await answer.arrayBuffer();
      await Bun.sleep(1000);
      return { started, afterRequest: memoryOf(proc.pid) };
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const seen = new Map<string, Run[]>(binaries.map((b) => [b, []]));
for (let i = 0; i < runs; i++) {
  for (const bin of binaries) {
    const run = await measure(bin);
    seen.get(bin)!.push(run);
    console.log(JSON.stringify({ bin, run: i + 1, ...run }));
  }
}

const medianOf = (bin: string, when: keyof Run, f: (typeof FIELDS)[number]) => median(seen.get(bin)!.map((r) => r[when][f]));
console.log(`\nmedians of ${runs} runs, MB (ratio against ${binaries[0]})`);
for (const bin of binaries) {
  for (const when of ['started', 'afterRequest'] as const) {
    const cells = FIELDS.map((f) => {
      const v = medianOf(bin, when, f);
      const ratio = bin === binaries[0] ? '' : ` (${(v / medianOf(binaries[0]!, when, f)).toFixed(2)})`;
      return `${f} ${v.toFixed(1)}${ratio}`;
    });
    console.log(`${bin}  ${when.padEnd(12)}  ${cells.join('  ')}`);
  }
}
