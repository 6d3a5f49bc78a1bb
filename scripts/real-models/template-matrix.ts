/**
 * The chat-template matrix: for every chat template llama.cpp bundles, a llama-server with
 * `--jinja --chat-template-file <it>` and the tiny model, and every request shape Parley makes
 * (shapes.ts) sent through the compiled binary. Prints the matrix as Markdown and keeps the last
 * full one in docs/ai-providers.md between marker comments.
 *
 *   bun run scripts/real-models/template-matrix.ts [--only SUBSTRING] [--jobs 1|2] [--no-docs]
 *
 * Exit code 1 when a cell fails that known-failures.ts does not list.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { useRunTempDir } from '../lib/run-temp-dir';
import { startFakeSearxng } from '../../test/fakes/searxng';
import { llamaServerDir, startLlamaServer, testModelPath } from './llama-server';
import { buildBinary } from './parley-binary';
import { SHAPES, type ShapeName, type ShapeResult } from './shapes';
import { knownFailure } from './known-failures';
import { runShapesAgainst, type Rig } from './run-shapes';

/** Parley's system prompt and tool definitions alone are ~1,500 of the tiny model's tokens. */
const CONTEXT_TOKENS = 4096;
const MAX_JOBS = 2;
const DOC = resolve(import.meta.dir, '../../docs/ai-providers.md');
const START = '<!-- template-matrix:start -->';
const END = '<!-- template-matrix:end -->';

const { values: args } = parseArgs({ options: { only: { type: 'string' }, jobs: { type: 'string', default: '2' }, 'no-docs': { type: 'boolean', default: false } } });
useRunTempDir('parley-template-matrix');

interface Row {
  template: string;
  cells: Partial<Record<ShapeName, ShapeResult>>;
}

const started = Date.now();
const dir = llamaServerDir();
const model = testModelPath();
const templates = readdirSync(join(dir, 'templates'))
  .filter((f) => f.endsWith('.jinja') && (!args.only || f.includes(args.only)))
  .sort();
const bin = await buildBinary();
const searx = startFakeSearxng();
const jobs = Math.max(1, Math.min(MAX_JOBS, Number(args.jobs) || 1));

const rows: Row[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: jobs }, async () => {
    while (next < templates.length) {
      const template = templates[next++]!;
      const row: Row = { template, cells: {} };
      rows.push(row);
      const t0 = Date.now();
      await runTemplate(template, row);
      const failed = SHAPES.filter((s) => !row.cells[s]?.ok);
      console.error(`${template}: ${failed.length ? `failed ${failed.join(', ')}` : 'all shapes pass'} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
  }),
);
searx.stop();
rows.sort((a, b) => a.template.localeCompare(b.template));
const seconds = Math.round((Date.now() - started) / 1000);
const table = renderMatrix(rows, seconds);
console.log(table);
if (!args.only && !args['no-docs']) writeIntoDocs(table);

const unexpected = rows.flatMap((r) => SHAPES.filter((s) => !r.cells[s]?.ok && !knownFailure(r.template, s)).map((s) => `${r.template} × ${s}: ${r.cells[s]?.detail}`));
const nowPassing = rows.flatMap((r) => SHAPES.filter((s) => r.cells[s]?.ok && knownFailure(r.template, s)).map((s) => `${r.template} × ${s}`));
if (nowPassing.length) console.error(`Listed as known failures but passing now (remove them from known-failures.ts):\n  ${nowPassing.join('\n  ')}`);
if (unexpected.length) {
  console.error(`Failures not on the known-failure list:\n  ${unexpected.join('\n  ')}`);
  process.exit(1);
}
console.error(`template matrix: ${templates.length} templates × ${SHAPES.length} shapes in ${seconds} s, no unexpected failure`);

async function runTemplate(template: string, row: Row): Promise<void> {
  let server;
  try {
    server = await startLlamaServer({ dir, model, contextTokens: CONTEXT_TOKENS, templateFile: join(dir, 'templates', template) });
  } catch (err) {
    const detail = `llama-server cannot load the template: ${lastLine(String(err instanceof Error ? err.message : err))}`;
    for (const s of SHAPES) row.cells[s] = { ok: false, detail };
    return;
  }
  try {
    const rig: Rig = { bin, llamaApiUrl: server.apiUrl, searxngUrl: searx.url };
    await runShapesAgainst(rig, (shape, result) => (row.cells[shape] = result));
  } finally {
    await server.stop();
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).at(-1) ?? text;
}

/** One line a table cell can hold: no pipes, no line breaks, not a whole traceback. */
function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The table, then one note per reason: a known failure's reason and fix once, with the first error seen; any other failure as it came. */
function renderMatrix(rows: Row[], seconds: number): string {
  const notes: { key: string; text: string }[] = [];
  const note = (template: string, shape: ShapeName, detail: string) => {
    const known = knownFailure(template, shape);
    const key = known ? `${known.reason}\0${known.fixedBy}` : detail;
    let i = notes.findIndex((n) => n.key === key);
    if (i < 0)
      i = notes.push({ key, text: known ? `${known.reason}. Fix: ${known.fixedBy}. For example: ${oneLine(detail)}` : `Not on the known-failure list: ${oneLine(detail)}` }) - 1;
    return `${known ? 'known' : '**FAILS**'} [${i + 1}]`;
  };
  const lines = [
    `| Template | ${SHAPES.join(' | ')} |`,
    `|---|${SHAPES.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.template.replace(/\.jinja$/, '')} | ${SHAPES.map((s) => (r.cells[s]?.ok ? 'ok' : note(r.template, s, r.cells[s]?.detail ?? 'not run'))).join(' | ')} |`),
  ];
  const passed = rows.reduce((n, r) => n + SHAPES.filter((s) => r.cells[s]?.ok).length, 0);
  return [
    `${rows.length} templates × ${SHAPES.length} shapes: ${passed} of ${rows.length * SHAPES.length} cells pass (llama.cpp ${readVersion()}, ${CONTEXT_TOKENS}-token context, ${seconds} s with ${jobs} at a time).`,
    '',
    ...lines,
    '',
    ...notes.map((n, i) => `${i + 1}. ${n.text}`),
  ].join('\n');
}

function readVersion(): string {
  try {
    return readFileSync(join(dir, 'LLAMA_CPP_VERSION'), 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

function writeIntoDocs(table: string): void {
  const doc = readFileSync(DOC, 'utf8');
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/ai-providers.md has no ${START} … ${END} markers`);
  writeFileSync(DOC, `${doc.slice(0, a + START.length)}\n${table}\n${doc.slice(b)}`);
}
