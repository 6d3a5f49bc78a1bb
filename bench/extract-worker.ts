// The document reader's worker built apart without bytecode (the default build) against the same
// worker with bytecode, as an entry point of the executable (`scripts/build.ts --worker-bytecode`,
// the build before): both executables built into temporary directories, their sizes and the floor
// (an empty program, the build's flags) measured in the same run, then rounds alternating between
// them: a server started on a fresh data directory, a PDF then a DOCX uploaded `--reads` times,
// each timed from the upload's answer until its text is ready (polled every 5 ms). Every read
// starts a fresh worker, so the first after start and the later ones pay its start alike; the
// first also reads the worker from the executable cold.
//
//   bun run bench/extract-worker.ts [--rounds 5] [--reads 3]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { floorBytes, MB } from '../scripts/lib/binary-share';
import { makeDocx } from '../test/fixtures/documents';
import { startParley, type Parley } from './lib/parley';

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { rounds: { type: 'string', default: '5' }, reads: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);
const reads = Number(values.reads);
const root = join(import.meta.dir, '..');
const work = mkdtempSync(join(tmpdir(), 'parley-bench-worker-'));

const BUILDS = { 'worker with bytecode (before, baseline)': ['--worker-bytecode'], 'worker without bytecode (now)': [] } as const;
type Build = keyof typeof BUILDS;
const bins = {} as Record<Build, string>;
for (const [name, flags] of Object.entries(BUILDS) as [Build, readonly string[]][]) {
  const out = join(work, flags.length ? 'before' : 'now', 'parley');
  const p = Bun.spawnSync([process.execPath, 'run', 'scripts/build.ts', '--outfile', out, ...flags], { cwd: root, stdout: 'ignore', stderr: 'pipe' });
  if (p.exitCode !== 0) throw new Error(`build ${name} failed: ${p.stderr.toString()}`);
  bins[name] = out;
}
const floor = await floorBytes();
const sizes = Object.fromEntries(Object.entries(bins).map(([b, bin]) => [b, statSync(bin).size])) as Record<Build, number>;

// A five-page PDF of text and a DOCX of 200 paragraphs: small documents, so the worker's start is
// most of the read.
const pdf = await PDFDocument.create();
const font = await pdf.embedFont(StandardFonts.Helvetica);
for (let page = 0; page < 5; page++) {
  const p = pdf.addPage();
  for (let line = 0; line < 40; line++) p.drawText(`Page ${page + 1}, line ${line + 1}: heliotropes turn towards the sun.`, { x: 40, y: 760 - line * 18, size: 11, font });
}
const DOCS = { pdf: { bytes: await pdf.save(), name: 'flowers.pdf' }, docx: { bytes: makeDocx(Array.from({ length: 200 }, (_, i) => `Paragraph ${i + 1}: heliotropes turn towards the sun.`)), name: 'flowers.docx' } };

async function timedRead(p: Parley, doc: { bytes: Uint8Array; name: string }): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([doc.bytes]), doc.name);
  const res = await fetch(`${p.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': p.key }, body: form });
  const t = performance.now();
  const { id } = (await res.json()) as { id: string };
  for (;;) {
    const f = (await p.call('files/getFile', { fileId: id })).body;
    if (f.textStatus === 'ready') return performance.now() - t;
    if (f.textStatus === 'failed') throw new Error(`${doc.name}: ${f.textError}`);
    await Bun.sleep(5);
  }
}

const times: Record<string, number[]> = {};
const add = (key: string, ms: number) => (times[key] ??= []).push(ms);
const order = Object.keys(BUILDS) as Build[];
for (let round = 0; round < rounds; round++) {
  for (const build of round % 2 ? [...order].reverse() : order) {
    const p = await startParley(bins[build]);
    try {
      for (let i = 0; i < reads; i++)
        for (const kind of ['pdf', 'docx'] as const) add(`${build}|${kind}|${i === 0 ? 'first' : 'later'}`, await timedRead(p, DOCS[kind]));
    } finally {
      await p.stop();
    }
  }
}
rmSync(work, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`floor (an empty program, the build's flags): ${(floor / MB).toFixed(2)} MB; ${rounds} rounds, ${reads} reads of each kind a round`);
for (const build of order) console.log(`${build}: ${(sizes[build] / MB).toFixed(2)} MB, Parley's share ${((sizes[build] - floor) / MB).toFixed(2)} MB`);
console.log('| read | ' + order.join(' | ') + ' | ratio |');
console.log('|---|' + order.map(() => '---|').join('') + '---|');
for (const kind of ['pdf', 'docx'])
  for (const when of ['first', 'later']) {
    const [base, now] = order.map((b) => median(times[`${b}|${kind}|${when}`]!));
    console.log(`| ${kind.toUpperCase()}, ${when} | ${base!.toFixed(0)} ms | ${now!.toFixed(0)} ms | ×${(now! / base!).toFixed(2)} |`);
  }
