/**
 * Parley's upload figures (`files/upload`), against the floor measured in the same run.
 *
 *   node_modules/.bin/bun run bench/files.ts [--quick] [--binary PATH]
 *
 * 1. Throughput of 1, 10 and 100 MB plain-text documents sent to the compiled binary as a
 *    streamed multipart body, against `Bun.write` of the same bytes to a file on the same file
 *    system; alternating rounds, the best of each counts.
 * 2. Memory: the server's peak RSS while it receives one upload of each size (a fresh server
 *    each, sampled from /proc every 10 ms and checked against the kernel's high-water mark),
 *    against its idle RSS just before.
 * Builds the binary into the run's temporary directory (or takes --binary). Prints a table, writes
 * bench/results/files.json and, after a full run (not --quick), its section of bench/RESULTS.md.
 * About a minute on 2 shared cores.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { useRunTempDir } from '../scripts/lib/run-temp-dir';
import { fmtMB } from './lib/context';
import { startParley, tailLog, type Parley } from './lib/parley';
import { killAllChildren } from './lib/proc';
import { describeMachine, formatTable, loadNow, updateResultsFile, type Row, type RunRecord, type Section, headCommit } from './lib/report';
import { median, round } from './lib/stats';

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    quick: { type: 'boolean', default: false },
    binary: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('usage: bun run bench/files.ts [--quick] [--binary PATH]');
  process.exit(0);
}

const MB = 1024 * 1024;
/** Sizes and their alternating rounds (full, quick). */
const SIZES: { mb: number; rounds: [number, number] }[] = [
  { mb: 1, rounds: [12, 4] },
  { mb: 10, rounds: [6, 2] },
  { mb: 100, rounds: [3, 1] },
];
/** Bytes a client hands the socket at a time. */
const CHUNK = 256 * 1024;
const SECTION: Section = { marker: 'files', script: 'bench/files.ts' };

const benchDir = import.meta.dir;
const root = join(benchDir, '..');
const log = (m: string) => console.error(`[files] ${m}`);
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    killAllChildren();
    process.exit(130);
  });

const { dir: tempDir } = useRunTempDir('parley-bench-files', { keepOnFailure: true });
const quick = values.quick!;
const startedAt = new Date();
const loadAtStart = loadNow();
const t0 = performance.now();

let bin = values.binary;
if (!bin) {
  bin = join(tempDir, 'parley');
  log('building the binary');
  const b = Bun.spawnSync([process.execPath, 'run', 'scripts/build.ts', '--outfile', bin], { cwd: root, stdout: 'ignore', stderr: 'inherit' });
  if (b.exitCode !== 0) {
    console.error('bench cannot run: the build failed');
    process.exit(1);
  }
}

/** What every server gets: files up to 128 MB, a body limit to match, room for the rounds. */
const ENV = {
  PARLEY_FILES_MAX_BYTES: String(128 * MB),
  PARLEY_MAX_BODY_BYTES: String(129 * MB),
  PARLEY_FILES_QUOTA_BYTES: String(64 * 1024 * MB),
};

/** `mb` MB of plain text (numbered lines, so valid UTF-8 and never an image); `round` changes its first line. */
function documentOf(mb: number): Uint8Array {
  const line = new TextEncoder().encode('line 0000000 of a plain-text document the upload benchmark sends, nothing to decode\n');
  const bytes = new Uint8Array(mb * MB);
  for (let at = 0; at < bytes.length; at += line.length) bytes.set(line.subarray(0, Math.min(line.length, bytes.length - at)), at);
  return bytes;
}
const stamp = (bytes: Uint8Array, round: number) => bytes.set(new TextEncoder().encode(String(round).padStart(7, '0')), 5);

/**
 * POST the bytes as `multipart/form-data` with a declared length, handed to fetch as a stream of
 * 256 KB chunks (the client holds the document; the server must receive it as it comes). The
 * milliseconds from sending until the answer was read, and the file's id.
 */
async function timeUpload(p: Parley, bytes: Uint8Array, name: string): Promise<{ ms: number; id: string }> {
  const boundary = `parley-bench-${crypto.randomUUID()}`;
  const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n`);
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
  const parts = [head, ...chunksOf(bytes), tail];
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < parts.length) controller.enqueue(parts[next++]!);
      else controller.close();
    },
  });
  const started = performance.now();
  const res = await fetch(`${p.url}/api/files/upload`, {
    method: 'POST',
    headers: { 'x-api-key': p.key, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + bytes.length + tail.length) },
    body,
  });
  const answer = (await res.json()) as { id?: string; size?: number };
  const ms = performance.now() - started;
  if (res.status !== 200 || answer.size !== bytes.length) throw new Error(`upload of ${name} answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}\n${tailLog(p)}`);
  return { ms, id: answer.id! };
}

function chunksOf(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK) out.push(bytes.subarray(at, at + CHUNK));
  return out;
}

/** Wait until the document's text is extracted (or refused), then delete it: the next round starts on a quiet server. */
async function settleAndDelete(p: Parley, id: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const file = await p.call('files/getFile', { fileId: id });
    if (file.body?.textStatus !== 'pending') break;
    await Bun.sleep(50);
  }
  const deleted = await p.call('files/deleteFile', { fileId: id });
  if (deleted.status !== 200) throw new Error(`deleteFile answered ${deleted.status}`);
}

/** The floor: the same bytes written to a new file beside the server's data directory. */
async function timeRawWrite(dir: string, bytes: Uint8Array, round: number): Promise<number> {
  const path = join(dir, `raw-${round}.txt`);
  const started = performance.now();
  await Bun.write(path, bytes);
  const ms = performance.now() - started;
  rmSync(path, { force: true });
  return ms;
}

/** VmRSS and VmHWM (the peak the kernel saw) of `pid`, in MB. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) / 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

const mbps = (bytes: number, ms: number) => bytes / MB / (ms / 1000);
const fmtRate = (n: number) => `${n.toLocaleString('en-US', { maximumFractionDigits: n < 100 ? 1 : 0 })} MB/s`;
const raw: Record<string, unknown> = {};

async function throughputRows(): Promise<Row[]> {
  const rows: Row[] = [];
  const p = await startParley(bin!, ENV);
  try {
    const rawDir = join(p.dataDir, '..');
    // A first small upload opens what the first timed one would otherwise pay for (the database's pages, the temp folder).
    await settleAndDelete(p, (await timeUpload(p, documentOf(1), 'warm-up.txt')).id);
    // What an upload costs whatever its size (authentication, the temp file, sniffing, the row): a 1 KB one.
    const smallMs: number[] = [];
    const small = documentOf(1).subarray(0, 1024);
    for (let r = 0; r < (quick ? 3 : 9); r++) {
      stamp(small, r);
      const up = await timeUpload(p, small, `small-${r}.txt`);
      smallMs.push(up.ms);
      await settleAndDelete(p, up.id);
    }
    raw.small_1kb_ms = smallMs;
    for (const { mb, rounds } of SIZES) {
      const bytes = documentOf(mb);
      const parleyMs: number[] = [];
      const rawMs: number[] = [];
      const n = quick ? rounds[1] : rounds[0];
      for (let r = 0; r < n; r++) {
        stamp(bytes, r);
        // Alternating, and swapping who goes first every other round, so that neither side always follows the other's garbage.
        const steps = [async () => rawMs.push(await timeRawWrite(rawDir, bytes, r)), async () => {
          const up = await timeUpload(p, bytes, `bench-${mb}mb-${r}.txt`);
          parleyMs.push(up.ms);
          await settleAndDelete(p, up.id);
        }];
        for (const step of r % 2 ? steps.reverse() : steps) await step();
      }
      const best = { parley: mbps(bytes.length, Math.min(...parleyMs)), raw: mbps(bytes.length, Math.min(...rawMs)) };
      raw[`throughput_${mb}mb`] = { parleyMs, rawMs };
      rows.push({
        figure: '1 upload',
        measure: `files/upload, ${mb} MB text document, streamed multipart`,
        parley: fmtRate(best.parley),
        baseline: fmtRate(best.raw),
        ratio: best.parley / best.raw,
        target: 'reported',
        detail:
          `best of ${n}; medians ${fmtRate(mbps(bytes.length, median(parleyMs)))} / ${fmtRate(mbps(bytes.length, median(rawMs)))}; upload ${round(Math.min(...parleyMs), 1)} ms, write ${round(Math.min(...rawMs), 1)} ms` +
          (mb === 1 ? `; a 1 KB upload takes ${round(Math.min(...smallMs), 1)} ms (median ${round(median(smallMs), 1)}), what any upload costs` : ''),
      });
      log(`  ${mb} MB: ${rows.at(-1)!.parley} against ${rows.at(-1)!.baseline}`);
    }
  } finally {
    await p.stop();
  }
  return rows;
}

async function memoryRows(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { mb } of SIZES) {
    const bytes = documentOf(mb);
    const p = await startParley(bin!, ENV);
    try {
      await Bun.sleep(1000);
      const idle = memoryOf(p.pid);
      let peak = idle.rss;
      const timer = setInterval(() => (peak = Math.max(peak, memoryOf(p.pid).rss)), 10);
      const up = await timeUpload(p, bytes, `memory-${mb}mb.txt`).finally(() => clearInterval(timer));
      const after = memoryOf(p.pid);
      peak = Math.max(peak, after.rss);
      // The kernel's high-water mark sees what 10 ms samples may miss, once it passes the start's own peak.
      const hwmGrew = after.hwm > idle.hwm;
      if (hwmGrew) peak = Math.max(peak, after.hwm);
      raw[`memory_${mb}mb`] = { idle, after, peak };
      rows.push({
        figure: '2 memory',
        measure: `peak RSS receiving one ${mb} MB upload`,
        parley: fmtMB(peak),
        baseline: fmtMB(idle.rss),
        ratio: peak / idle.rss,
        target: 'reported',
        detail: `+${fmtMB(peak - idle.rss)} over idle (the upload's own size: ${mb} MB); VmHWM ${fmtMB(after.hwm)}${hwmGrew ? '' : ' (the start-up peak)'}; baseline: the same server idle, 1 s after start`,
      });
      log(`  ${mb} MB: peak ${fmtMB(peak)}, idle ${fmtMB(idle.rss)}`);
    } finally {
      await p.stop();
    }
  }
  return rows;
}

const rows: Row[] = [];
for (const [title, run] of [['1 upload throughput', throughputRows], ['2 memory', memoryRows]] as const) {
  log(title);
  try {
    rows.push(...(await run()));
  } catch (err) {
    log(`${title} failed: ${(err as Error).stack ?? err}`);
    rows.push({ figure: title, measure: '(whole figure)', skipped: `failed: ${(err as Error).message.split('\n')[0]}` });
  } finally {
    killAllChildren();
  }
}

const commit = headCommit(root);
const run: RunRecord = {
  startedAt: startedAt.toISOString(),
  durationS: (performance.now() - t0) / 1000,
  mode: quick ? 'quick' : 'full',
  only: null,
  commit,
  machine: describeMachine('fetch, streamed bodies', loadAtStart),
  rows,
  raw,
};
console.log(`\n${formatTable(rows)}\n`);
console.log(`load average ${run.machine.loadAverage.join(' → ')} on ${run.machine.cores} cores${run.machine.loadAverage[0] > run.machine.cores ? ': a busy machine, read the ratios, not the absolute numbers' : ''}`);
mkdirSync(join(benchDir, 'results'), { recursive: true });
writeFileSync(join(benchDir, 'results', 'files.json'), JSON.stringify(run, null, 2) + '\n');
log(`wrote bench/results/files.json (${run.durationS.toFixed(0)} s)`);
if (!quick) {
  updateResultsFile(join(benchDir, 'RESULTS.md'), run, SECTION);
  log('updated bench/RESULTS.md');
}
process.exit(0);
