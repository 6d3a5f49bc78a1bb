/**
 * Process helpers: resident memory and CPU time from /proc (Linux), free ports, waiting for a
 * server, and one registry of child processes so that every exit path kills what the run started.
 */
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';

const CLK_TCK = 100; // USER_HZ on Linux; /proc/<pid>/stat counts CPU time in these ticks.

/** Resident set size of `pid` in MB, or NaN when it cannot be read. */
export function rssMB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU seconds consumed so far by `pid`. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/** Sample `pid`'s RSS every `everyMs` until stopped; returns the peak in MB. */
export function sampleRss(pid: number, everyMs = 100): { stop: () => number } {
  let peak = rssMB(pid);
  const timer = setInterval(() => {
    const v = rssMB(pid);
    if (v > peak || Number.isNaN(peak)) peak = v;
  }, everyMs);
  return { stop: () => (clearInterval(timer), peak) };
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Poll `url` until it answers 200; returns the milliseconds waited. Throws after `timeoutMs`. */
export async function waitFor200(url: string, timeoutMs = 15_000, isAlive: () => boolean = () => true): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (!isAlive()) throw new Error(`process exited before ${url} answered`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - start;
    } catch {
      // Not listening yet.
    }
    await Bun.sleep(2);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

const children = new Set<Bun.Subprocess>();

/** Bun.spawn, registering the child so that the run kills it on exit, whatever the exit path. */
export const spawnChild = ((cmd: string[], opts: object) => {
  const proc = Bun.spawn(cmd, opts);
  children.add(proc);
  void proc.exited.then(() => children.delete(proc));
  return proc;
}) as unknown as (typeof Bun)['spawn'];

/** Stop a child politely (SIGTERM), then for sure (SIGKILL) after `graceMs`. */
export async function stopChild(proc: Bun.Subprocess, graceMs = 5000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

export function killAllChildren(): void {
  for (const proc of children) proc.kill('SIGKILL');
  children.clear();
}
