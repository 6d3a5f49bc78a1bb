/**
 * The results: one row per measured figure, printed as a table, written to
 * bench/results/latest.json and (after a full run) into bench/RESULTS.md between markers, so the
 * hand-written notes around it (fixes, before/after) survive a re-run.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, release } from 'node:os';

export interface Row {
  /** Figure number and name, e.g. "1 write". */
  figure: string;
  /** What was measured, e.g. "sendGroupMessage, 0 subscribers, 32 conn". */
  measure: string;
  /** Parley's absolute number with its unit, e.g. "8,120 req/s". */
  parley?: string;
  /** The baseline's absolute number, measured in the same run. */
  baseline?: string;
  /** Parley relative to the baseline (or to the target for absolute figures), e.g. 0.71. */
  ratio?: number;
  /** The target, e.g. "≥ 0.60". */
  target?: string;
  met?: boolean;
  /** Latency percentiles and other context. */
  detail?: string;
  /** Set when the figure could not be measured in this build, with the reason. */
  skipped?: string;
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGB: number;
  kernel: string;
  bun: string;
  loadTool: string;
  /** 1-minute load average when the run started and ended: how shared the machine was. */
  loadAverage: [number, number];
}

export const loadNow = () => Math.round(loadavg()[0]! * 10) / 10;

export function describeMachine(loadTool: string, loadAtStart: number): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${process.platform}-${process.arch} ${release()}`,
    bun: Bun.version,
    loadTool,
    loadAverage: [loadAtStart, loadNow()],
  };
}

const columns: [keyof Row, string][] = [
  ['figure', 'Figure'],
  ['measure', 'Measure'],
  ['parley', 'Parley'],
  ['baseline', 'Baseline'],
  ['ratio', 'Ratio'],
  ['target', 'Target'],
  ['met', 'Met'],
  ['detail', 'Detail'],
];

function cell(row: Row, key: keyof Row): string {
  if (row.skipped && key === 'detail') return `skipped: ${row.skipped}`;
  const v = row[key];
  if (v === undefined) return '';
  if (key === 'ratio') return (v as number).toFixed(2);
  if (key === 'met') return v ? 'yes' : 'NO';
  return String(v);
}

/** A plain-text table for the terminal. */
export function formatTable(rows: Row[]): string {
  const cells = rows.map((r) => columns.map(([k]) => cell(r, k)));
  const widths = columns.map(([, h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns.map(([, h]) => h)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** A Markdown table for RESULTS.md. */
export function formatMarkdown(rows: Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${columns.map(([, h]) => h).join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${columns.map(([k]) => esc(cell(r, k))).join(' | ')} |`),
  ].join('\n');
}

export interface RunRecord {
  startedAt: string;
  durationS: number;
  mode: 'full' | 'quick';
  only: string[] | null;
  commit: string;
  machine: Machine;
  rows: Row[];
  /** Raw numbers per figure, for whoever wants more than the table. */
  raw: Record<string, unknown>;
}

const BEGIN = '<!-- bench:begin (written by bench/run.ts; edit outside the markers) -->';
const END = '<!-- bench:end -->';

export function renderResultsSection(run: RunRecord): string {
  const m = run.machine;
  return [
    BEGIN,
    `Last full run: ${run.startedAt} (${Math.round(run.durationS)} s), commit \`${run.commit}\`.`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGB} GB RAM, ${m.kernel}; Bun ${m.bun}; load generator ${m.loadTool}` +
      ` (on the same cores as the server); load average ${m.loadAverage[0]} at the start, ${m.loadAverage[1]} at the end.`,
    '',
    formatMarkdown(run.rows),
    END,
  ].join('\n');
}

/** Replace the generated section of RESULTS.md (or append it), keeping everything else. */
export function updateResultsFile(path: string, run: RunRecord): void {
  const section = renderResultsSection(run);
  const old = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n\n';
  const a = old.indexOf(BEGIN);
  const b = old.indexOf(END);
  const next = a >= 0 && b > a ? old.slice(0, a) + section + old.slice(b + END.length) : `${old.trimEnd()}\n\n${section}\n`;
  writeFileSync(path, next);
}
