// Shared by the fault scripts: build the binary, run admin commands, start and kill the server.
// Everything listens on 127.0.0.1 only.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForListening } from '../lib/wait-for-listening';

const root = new URL('../..', import.meta.url).pathname;

/** The command that runs Parley: a compiled binary, or `bun cli/main.ts` when none is given. */
export type ParleyCmd = string[];

export function buildBinary(): ParleyCmd {
  const out = join(mkdtempSync(join(tmpdir(), 'parley-fault-bin-')), 'parley');
  const build = Bun.spawnSync([process.execPath, 'run', 'scripts/build.ts', '--outfile', out], { cwd: root, stdout: 'pipe', stderr: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  return [out];
}

export const sourceCmd = (): ParleyCmd => [process.execPath, join(root, 'cli/main.ts')];

export function newDataDir(prefix: string): string {
  return join(mkdtempSync(join(tmpdir(), `${prefix}-`)), 'data');
}

export function admin(cmd: ParleyCmd, dataDir: string, args: string[]): string {
  const p = Bun.spawnSync([...cmd, ...args, '--data-dir', dataDir], { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } });
  if (p.exitCode !== 0) throw new Error(`parley ${args.join(' ')} failed: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

/** Create a user and an API key for it; returns the key. */
export function createUserWithKey(cmd: ParleyCmd, dataDir: string, email: string): string {
  admin(cmd, dataDir, ['user', 'create', '--email', email]);
  return JSON.parse(admin(cmd, dataDir, ['apikey', 'create', '--email', email, '--json'])).key;
}

export interface Server {
  url: string;
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  pid: number;
}

export async function startServer(cmd: ParleyCmd, dataDir: string, env: Record<string, string> = {}): Promise<Server> {
  const proc = Bun.spawn([...cmd, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', PARLEY_LOG_LEVEL: 'warn', ...env },
  });
  try {
    const url = await waitForListening(proc, 20_000);
    // Keep draining stdout so a chatty server never blocks on a full pipe.
    void proc.stdout.pipeTo(new WritableStream()).catch(() => undefined);
    void proc.stderr.pipeTo(new WritableStream()).catch(() => undefined);
    return { url, proc, pid: proc.pid };
  } catch (err) {
    proc.kill('SIGKILL');
    throw err;
  }
}

export type Api = (path: string, body: unknown, opts?: { signal?: AbortSignal }) => Promise<{ status: number; body: any }>;

export function apiFor(url: string, key: string): Api {
  return async (path, body, opts = {}) => {
    const res = await fetch(`${url}/api/${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: opts.signal,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

/** The operations this build serves, from its OpenAPI document (write kinds and churn adapt to it). */
export async function servedOperations(url: string): Promise<Set<string>> {
  const spec = (await (await fetch(`${url}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
  return new Set(Object.keys(spec.paths).map((p) => p.replace(/^\/api\//, '')));
}

/** Parse `--name value` flags. */
export function flag(name: string, fallback: string): string {
  const i = Bun.argv.indexOf(`--${name}`);
  return i > 0 && Bun.argv[i + 1] !== undefined ? Bun.argv[i + 1]! : fallback;
}
