/**
 * The server under test: the compiled `dist/parley`, on 127.0.0.1, on a fresh temporary data
 * directory, with one user and an API key made by its own CLI (as a self-hoster would).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnChild, stopChild, waitFor200 } from './proc';

export interface Parley {
  url: string;
  pid: number;
  dataDir: string;
  key: string;
  email: string;
  logFile: string;
  /** POST /api/<path> with the API key and a body already serialised; the raw answer. */
  send(path: string, body: string, headers?: Record<string, string>): Promise<Response>;
  /** POST /api/<path> with the API key; the parsed JSON body and status. */
  call(path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/** Settings every bench server gets; a figure adds its own (e.g. the AI provider). */
export const BENCH_ENV: Record<string, string> = {
  // The fan-out figures hold up to 10,000 streams with one user's key (default cap: 16 a user).
  PARLEY_MAX_STREAMS_PER_USER: '20000',
  // One user sends thousands of messages a second: the per-user rate limits would answer 429.
  PARLEY_RATE_LIMIT_WRITE: 'off',
  PARLEY_RATE_LIMIT_AI: 'off',
  // Production defaults otherwise: request lines are logged at info, to a file like a service's log.
};

function runCli(bin: string, env: Record<string, string>, args: string[]): string {
  const r = Bun.spawnSync([bin, ...args], { env, stdout: 'pipe', stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`parley ${args.join(' ')} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

export function parleyEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PARLEY_DATA_DIR: dataDir, ...BENCH_ENV, ...extra };
}

/** Create a user and an API key in `dataDir` with the CLI; returns the key. */
export function createUserWithKey(bin: string, env: Record<string, string>, email: string): string {
  runCli(bin, env, ['user', 'create', '--email', email, '--name', email.split('@')[0]!]);
  return JSON.parse(runCli(bin, env, ['apikey', 'create', '--email', email, '--json'])).key;
}

export async function startParley(bin: string, extraEnv: Record<string, string> = {}): Promise<Parley> {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'parley-bench-')), 'data');
  const env = parleyEnv(dataDir, extraEnv);
  const email = 'bench@example.org';
  const key = createUserWithKey(bin, env, email);
  const port = await freePort();
  const logFile = join(dataDir, '..', 'server.log');
  const proc = spawnChild([bin, 'serve', '--host', '127.0.0.1', '--port', String(port)], {
    env,
    stdout: Bun.file(join(dataDir, '..', 'server.out')),
    stderr: Bun.file(logFile),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor200(`${url}/api/health`, 15_000, () => proc.exitCode === null);
  const send = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers }, body });
  const call = async (path: string, body: unknown = {}, headers: Record<string, string> = {}) => {
    const res = await send(path, JSON.stringify(body), headers);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (an event stream read whole, for instance): keep the text.
    }
    return { status: res.status, body: parsed as any };
  };
  return {
    url,
    pid: proc.pid,
    dataDir,
    key,
    email,
    logFile,
    send,
    call,
    // The database goes as soon as the server has stopped (its log stays for the report): a write
    // figure leaves hundreds of megabytes of dirty pages that the kernel would otherwise write
    // back while the next figure is being timed (the 12 MP PNG read 1.42-1.48 right after the
    // write figure, 1.26-1.31 after the others).
    stop: async () => {
      await stopChild(proc);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The last lines of a server's log, for an error message. */
export function tailLog(p: Parley, lines = 5): string {
  try {
    return readFileSync(p.logFile, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Thrown when the operation a figure measures is not in this build (404 from the router). */
export class Unavailable extends Error {}

/** Call an operation, turning the router's 404 for an unknown path into `Unavailable`. */
export async function callOperation(p: Parley, path: string, body: unknown): Promise<any> {
  const res = await p.call(path, body);
  if (res.status === 404 && res.body?.code === 'NOT_FOUND' && !(await operationExists(p, path)))
    throw new Unavailable(`operation not available: ${path}`);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body;
}

/** Whether the server's OpenAPI document lists `POST /api/<path>`. */
export async function operationExists(p: Parley, path: string): Promise<boolean> {
  const doc = (await (await fetch(`${p.url}/api/openapi.json`)).json()) as { paths?: Record<string, unknown> };
  return Boolean(doc.paths?.[`/api/${path}`]);
}
