/**
 * HTTP load: `wrk` when it is installed (C, one thread, cheap on a shared 2-core box), else
 * autocannon from bench/node_modules. Both drive POST requests with a fixed JSON body and report
 * requests per second and latency percentiles.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnChild } from './proc';

export type LoadTool = 'wrk' | 'autocannon';

export interface LoadSpec {
  url: string;
  headers?: Record<string, string>;
  body: unknown;
  connections: number;
  durationS: number;
}

export interface LoadResult {
  tool: LoadTool;
  rps: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Socket errors and non-2xx answers: a run with errors is not a valid figure. */
  errors: number;
  non2xx: number;
}

const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

function wrkScript(spec: LoadSpec): string {
  const headers = { 'content-type': 'application/json', ...spec.headers };
  return [
    'wrk.method = "POST"',
    `wrk.body = ${luaString(JSON.stringify(spec.body))}`,
    ...Object.entries(headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
    // Only done() is defined: a response() callback would make wrk hand every response to Lua.
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("BENCH_JSON {\\"requests\\":%d,\\"durationUs\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"status\\":%d,\\"timeout\\":%d,\\"p50\\":%d,\\"p99\\":%d,\\"max\\":%d}\\n",',
    '    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency:percentile(50), latency:percentile(99), latency.max))',
    'end',
  ].join('\n');
}

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-wrk-'));
  const script = join(dir, 'post.lua');
  writeFileSync(script, wrkScript(spec));
  const proc = spawnChild(['wrk', '-t1', `-c${spec.connections}`, `-d${spec.durationS}s`, '--timeout', '10s', '-s', script, spec.url], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (!line) throw new Error(`wrk gave no result: ${err || out}`);
  const r = JSON.parse(line.slice('BENCH_JSON '.length));
  return {
    tool: 'wrk',
    rps: r.requests / (r.durationUs / 1e6),
    requests: r.requests,
    p50Ms: r.p50 / 1000,
    p99Ms: r.p99 / 1000,
    maxMs: r.max / 1000,
    errors: r.connect + r.read + r.write + r.timeout,
    non2xx: r.status,
  };
}

async function runAutocannon(spec: LoadSpec, benchDir: string): Promise<LoadResult> {
  const bin = join(benchDir, 'node_modules', 'autocannon', 'autocannon.js');
  const headers = Object.entries({ 'content-type': 'application/json', ...spec.headers }).flatMap(([k, v]) => ['-H', `${k}=${v}`]);
  const proc = spawnChild(
    ['node', bin, '--json', '-c', String(spec.connections), '-d', String(spec.durationS), '-m', 'POST', ...headers, '-b', JSON.stringify(spec.body), spec.url],
    { stdout: 'pipe', stderr: 'pipe' },
  );
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (proc.exitCode !== 0 || !out.trim()) throw new Error(`autocannon failed: ${err}`);
  const r = JSON.parse(out);
  return {
    tool: 'autocannon',
    rps: r.requests.total / r.duration,
    requests: r.requests.total,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

export function runLoad(tool: LoadTool, spec: LoadSpec, benchDir: string): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(spec) : runAutocannon(spec, benchDir);
}
