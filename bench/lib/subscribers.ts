/** Drive bench/clients/sse-subscribers.ts: start it, wait until its streams are open, ask for reports. */
import { join } from 'node:path';
import { spawnChild, stopChild } from './proc';

export interface SubscriberReport {
  open: number;
  closed: number;
  frames: number;
  heartbeats: number;
  bytes: number;
  samples: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** With several `urls`: the samples of each server's streams. */
  byUrl?: { url: string; samples: number; p50Ms: number | null; p99Ms: number | null }[];
}

export interface Subscribers {
  pid: number;
  ready: { open: number; statuses: Record<string, number>; ms: number };
  report(): Promise<SubscriberReport>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSubscribers(
  benchDir: string,
  opts: { url: string; urls?: string[]; keys: string[]; groupChatId: string; count: number; mode: 'drain' | 'latency' | 'idle'; path?: string },
): Promise<Subscribers> {
  const proc = spawnChild([process.execPath, join(benchDir, 'clients', 'sse-subscribers.ts'), JSON.stringify(opts)], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const nextLine = async (): Promise<any> => {
    while (!buffered.includes('\n')) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the subscriber process ended early');
      buffered += decoder.decode(value);
    }
    const nl = buffered.indexOf('\n');
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    return JSON.parse(line);
  };
  const send = (cmd: string) => {
    proc.stdin.write(cmd + '\n');
    proc.stdin.flush();
  };
  const ready = await nextLine();
  return {
    pid: proc.pid,
    ready,
    report: async () => (send('report'), nextLine()),
    reset: async () => {
      send('reset');
      await nextLine();
    },
    stop: async () => {
      send('exit');
      await Promise.race([proc.exited, Bun.sleep(3000)]);
      await stopChild(proc);
    },
  };
}
