// The code interpreter's sandboxes (docs/code-interpreter.md): how long one takes to start (a
// `parley sandbox` child loading Pyodide, up to its first answer), how long a call takes in one
// already running (Python, then JavaScript in the same child: its first call makes the
// interpreter), and each child's peak memory (VmHWM), run after run. Baseline, measured in the
// same run: the same executable's bare start (`--version`), so the figures read as ratios on a
// shared, noisy machine.
//
//   bun run bench/code-sandbox.ts [--runs 5] [--binary PATH]   (default: Parley from source)
//
// With --binary the child is that executable's hidden `sandbox` command (Pyodide from the npm package).
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { testConfig } from '../src/config';
import { createSandboxes } from '../src/code/sandbox';
import { createLogger } from '../src/log';

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { runs: { type: 'string', default: '5' }, binary: { type: 'string' } } });
const runs = Number(values.runs);
const config = testConfig({ codeInterpreter: true, codeMaxSandboxes: 1, codeTimeoutS: 120 });
const sandboxes = createSandboxes(config, createLogger('error'), values.binary ? { executable: values.binary } : undefined);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const childHwmMb = () =>
  Math.max(
    0,
    ...readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map((d) => {
        try {
          if (readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] !== String(process.pid)) return 0;
          return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${d}/status`, 'utf8'))?.[1] ?? 0) / 1024;
        } catch {
          return 0;
        }
      }),
  );

const bare: number[] = [];
const cold: number[] = [];
const warm: number[] = [];
const heavy: number[] = [];
const hwm: number[] = [];
const jsFirst: number[] = [];
const jsWarm: number[] = [];
const jsHeavy: number[] = [];
for (let run = 0; run < runs; run++) {
  let t = performance.now();
  Bun.spawnSync(values.binary ? [values.binary, '--version'] : [process.execPath, '--version']);
  bare.push(performance.now() - t);

  t = performance.now();
  const box = await sandboxes.open([]);
  await box.run('1');
  cold.push(performance.now() - t);
  for (let i = 0; i < 5; i++) {
    t = performance.now();
    await box.run(`x${i} = sum(range(1000))`);
    warm.push(performance.now() - t);
  }
  t = performance.now();
  // A CSV of 100,000 rows written, read back and summed: a call that does some work.
  await box.run("import csv, io\nbuf = io.StringIO()\nw = csv.writer(buf)\nw.writerows((i, i * 0.5) for i in range(100000))\nsum(float(r[1]) for r in csv.reader(io.StringIO(buf.getvalue())))");
  heavy.push(performance.now() - t);
  t = performance.now();
  await box.run('1', 'javascript');
  jsFirst.push(performance.now() - t);
  for (let i = 0; i < 5; i++) {
    t = performance.now();
    await box.run(`var x${i} = 0; for (let j = 0; j < 1000; j++) x${i} += j`, 'javascript');
    jsWarm.push(performance.now() - t);
  }
  t = performance.now();
  // The same CSV in JavaScript: built as text, split and summed.
  await box.run("const rows = []; for (let i = 0; i < 100000; i++) rows.push(i + ',' + i * 0.5);\nrows.join('\\n').split('\\n').reduce((n, l) => n + Number(l.split(',')[1]), 0)", 'javascript');
  jsHeavy.push(performance.now() - t);
  hwm.push(childHwmMb());
  box.close();
  console.log(JSON.stringify({ run, bareMs: Math.round(bare.at(-1)!), coldMs: Math.round(cold.at(-1)!), warmMs: Math.round(median(warm.slice(-5))), csvMs: Math.round(heavy.at(-1)!), jsFirstMs: Math.round(jsFirst.at(-1)!), jsWarmMs: +median(jsWarm.slice(-5)).toFixed(1), jsCsvMs: Math.round(jsHeavy.at(-1)!), childPeakMb: Math.round(hwm.at(-1)!) }));
}
const b = median(bare);
console.log(
  JSON.stringify({
    summary: values.binary ? 'compiled binary' : 'from source',
    runs,
    bareStartMs: Math.round(b),
    coldStartMs: Math.round(median(cold)),
    coldOverBare: +(median(cold) / b).toFixed(1),
    warmCallMs: +median(warm).toFixed(1),
    warmOverBare: +(median(warm) / b).toFixed(2),
    csv100kMs: Math.round(median(heavy)),
    jsFirstCallMs: Math.round(median(jsFirst)),
    jsWarmCallMs: +median(jsWarm).toFixed(1),
    jsWarmOverPythonWarm: +(median(jsWarm) / median(warm)).toFixed(2),
    jsCsv100kMs: Math.round(median(jsHeavy)),
    jsCsvOverPythonCsv: +(median(jsHeavy) / median(heavy)).toFixed(2),
    childPeakMb: { min: Math.round(Math.min(...hwm)), median: Math.round(median(hwm)), max: Math.round(Math.max(...hwm)) },
  }),
);
