/** Start a baseline server from bench/baseline/ in its own process, like the server under test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext } from './context';
import { freePort, spawnChild, stopChild, waitFor200 } from './proc';

export interface BaselineServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startBaseline(ctx: BenchContext, script: string, args: string[] = []): Promise<BaselineServer> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-baseline-'));
  const port = await freePort();
  const proc = spawnChild([process.execPath, join(ctx.benchDir, 'baseline', script), String(port), dir, ...args], { stdout: 'ignore', stderr: 'inherit' });
  const url = `http://127.0.0.1:${port}/`;
  await waitFor200(url, 15_000, () => proc.exitCode === null);
  return {
    url,
    pid: proc.pid,
    // Its database goes once it has stopped, like Parley's (bench/lib/parley.ts).
    stop: async () => {
      await stopChild(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
