import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

/**
 * A throwaway Redis for tests: Debian's redis-server on 127.0.0.1 and a free port, in a temporary
 * directory, without persistence. Like test/support/postgres.ts, tests skip where it is not
 * installed (apt-get install redis-server), except under CI (`CI=true`), where .ci/run installs it.
 */
export const REDIS_SERVER = process.env.PARLEY_REDIS_SERVER ?? (Bun.which('redis-server') || undefined);

export function redisAvailable(): boolean {
  if (REDIS_SERVER) return true;
  if (process.env.CI === 'true') throw new Error("redis-server is not installed: .ci/run installs Debian's redis-server");
  console.warn('Redis tests skipped: no redis-server on PATH (apt-get install redis-server, or set PARLEY_REDIS_SERVER)');
  return false;
}

export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  if (!REDIS_SERVER) throw new Error('no redis-server installed');
  const dir = mkdtempSync(join(tmpdir(), 'parley-redis-'));
  const port = await freePort();
  const server = Bun.spawn([REDIS_SERVER, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const deadline = Date.now() + 20_000;
  while (true) {
    try {
      const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } });
      socket.end();
      break;
    } catch {
      if (Date.now() > deadline || server.exitCode !== null) throw new Error(`redis-server did not start: ${await new Response(server.stdout).text()}`);
      await Bun.sleep(50);
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      server.kill('SIGKILL');
      await server.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

