import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from '../build-binary';
import { waitForListening } from '../../scripts/lib/wait-for-listening';
import { freshPgDatabase, onPg } from './test-database';

export interface BinaryServer {
  url: string;
  pid: number;
  /** An API key of ann@example.org, made with the binary's own CLI. */
  key: string;
  /** POST a body (a value, sent as JSON, or raw text) to /api/<path> with the key. */
  post(path: string, body: unknown): Promise<Response>;
  /** The same as another user made with `users` (by e-mail). */
  postAs(email: string, path: string, body: unknown): Promise<Response>;
  stop(): Promise<void>;
  /** SIGKILL: the process dies where it stands (no drain, no lease let go). */
  kill(): Promise<void>;
  /** `parley serve` again on the same data directory and database, with the same users and keys. */
  restart(): Promise<BinaryServer>;
}

/**
 * `parley serve` from the compiled binary on a fresh data dir and port 0, default settings plus
 * `env`; on a PostgreSQL run (PARLEY_TEST_STORE=pg) on a fresh database of the run's server.
 */
export async function startBinaryServer(env: Record<string, string> = {}, users: string[] = [], opts: { admins?: string[] } = {}): Promise<BinaryServer> {
  const out = await buildBinaryOnce();
  const database: Record<string, string> = onPg ? { PARLEY_DATABASE_URL: await freshPgDatabase() } : {};
  const fullEnv: Record<string, string> = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'parley-bin-server-')), 'data'), ...database, ...env };
  const keys: Record<string, string> = {};
  for (const email of ['ann@example.org', ...users, ...(opts.admins ?? [])]) {
    const created = Bun.spawnSync([out, 'user', 'create', '--email', email, ...(opts.admins?.includes(email) ? ['--admin'] : [])], { env: fullEnv });
    if (created.exitCode !== 0) throw new Error(`user create failed: ${created.stderr.toString()}`);
    keys[email] = JSON.parse(Bun.spawnSync([out, 'apikey', 'create', '--email', email, '--json'], { env: fullEnv }).stdout.toString()).key;
  }
  return serve(out, fullEnv, keys);
}

async function serve(out: string, fullEnv: Record<string, string>, keys: Record<string, string>): Promise<BinaryServer> {
  const key = keys['ann@example.org']!;
  const postWith = (k: string, path: string, body: unknown) =>
    fetch(`${url}/api/${path}`, {
      method: 'POST',
      headers: { 'x-api-key': k, 'content-type': 'application/json' },
      body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
    });
  const proc = Bun.spawn([out, 'serve', '--port', '0'], { env: fullEnv, stdout: 'pipe', stderr: 'pipe' });
  const url = await waitForListening(proc).catch((err) => {
    proc.kill();
    throw err;
  });
  return {
    url,
    pid: proc.pid,
    key,
    post: (path, body) => postWith(key, path, body),
    postAs: (email, path, body) => postWith(keys[email]!, path, body),
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
    async kill() {
      proc.kill('SIGKILL');
      await proc.exited;
    },
    restart: () => serve(out, fullEnv, keys),
  };
}

/** VmHWM (the peak resident set since the process started) and VmRSS of a process, in MB. */
export function memoryOf(pid: number): { hwm: number; rss: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
}
