/**
 * The results: one row per measured figure, printed as a table, written to
 * bench/results/latest.json and (after a full run) into bench/RESULTS.md between markers, so the
 * hand-written notes around it (fixes, before/after) survive a re-run.
 */
import { execSync } from 'node:child_process';
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

/** The short hash of the checkout's HEAD, or `unknown` outside a git checkout (a release tarball). */
export function headCommit(dir: string): string {
  try {
    return execSync('git rev-parse --short HEAD', { cwd: dir }).toString().trim();
  } catch {
    return 'unknown';
  }
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

/** Other names for some columns (bench/cluster.ts compares two set-ups, neither of them a floor). */
export type ColumnNames = Partial<Record<keyof Row, string>>;

const headers = (names: ColumnNames) => columns.map(([k, h]) => names[k] ?? h);

function cell(row: Row, key: keyof Row): string {
  if (row.skipped && key === 'detail') return `skipped: ${row.skipped}`;
  const v = row[key];
  if (v === undefined) return '';
  if (key === 'ratio') return (v as number).toFixed(2);
  if (key === 'met') return v ? 'yes' : 'NO';
  return String(v);
}

/** A plain-text table for the terminal. */
export function formatTable(rows: Row[], names: ColumnNames = {}): string {
  const cells = rows.map((r) => columns.map(([k]) => cell(r, k)));
  const widths = headers(names).map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers(names)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** A Markdown table for RESULTS.md. */
export function formatMarkdown(rows: Row[], names: ColumnNames = {}): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${headers(names).join(' | ')} |`,
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

/** Which generated section of RESULTS.md: bench/run.ts's (the default) or another command's. */
export interface Section {
  marker: string;
  script: string;
  names?: ColumnNames;
}

const RUN_SECTION: Section = { marker: 'bench', script: 'bench/run.ts' };
const markers = (s: Section) => ({ begin: `<!-- ${s.marker}:begin (written by ${s.script}; edit outside the markers) -->`, end: `<!-- ${s.marker}:end -->` });

export function renderResultsSection(run: RunRecord, section: Section = RUN_SECTION): string {
  const m = run.machine;
  return [
    markers(section).begin,
    `Last full run: ${run.startedAt} (${Math.round(run.durationS)} s), commit \`${run.commit}\`.`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGB} GB RAM, ${m.kernel}; Bun ${m.bun}; load generator ${m.loadTool}` +
      ` (on the same cores as the server); load average ${m.loadAverage[0]} at the start, ${m.loadAverage[1]} at the end.`,
    '',
    formatMarkdown(run.rows, section.names),
    markers(section).end,
  ].join('\n');
}

/** Replace the generated section of RESULTS.md (or append it), keeping everything else. */
export function updateResultsFile(path: string, run: RunRecord, which: Section = RUN_SECTION): void {
  const section = renderResultsSection(run, which);
  const { begin, end } = markers(which);
  const old = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n\n';
  const a = old.indexOf(begin);
  const b = old.indexOf(end);
  const next = a >= 0 && b > a ? old.slice(0, a) + section + old.slice(b + end.length) : `${old.trimEnd()}\n\n${section}\n`;
  writeFileSync(path, next);
}
