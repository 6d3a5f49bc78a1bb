/**
 * A compiled `parley` serving on 127.0.0.1 for the real-model rig: its own data directory, a few
 * users with API keys made by its own CLI, and helpers to call it and read its event streams the
 * way a client does (a POST, then `data:` frames).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitForListening } from '../lib/wait-for-listening';
import { captureOutput } from './capture-output';

const root = resolve(import.meta.dir, '../..');

/** Build the executable (outside a test run, where test/build-binary.ts's buildBinaryOnce is not available). */
export async function buildBinary(): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), 'parley-real-bin-')), 'parley');
  const build = Bun.spawn([process.execPath, 'run', 'scripts/build.ts', '--outfile', out], { cwd: root, stdout: 'pipe', stderr: 'pipe' });
  if ((await build.exited) !== 0) throw new Error(`the build failed: ${await new Response(build.stderr).text()}`);
  return out;
}

export interface Parley {
  url: string;
  /** API keys of the users, in the order of `emails`. */
  keys: string[];
  call(path: string, body: unknown, key?: string, signal?: AbortSignal): Promise<Response>;
  json(path: string, body: unknown, key?: string): Promise<any>;
  /** What the server logged so far. */
  log(): string;
  /** The `cause` of the last warning or error it logged (why a group follow-up failed: its event says only that it did). */
  lastLogCause(): string | undefined;
  /** Requests the model server refused so far (set when a proxy sits in between, run-shapes.ts). */
  upstreamRefusals?: () => string[];
  stop(): Promise<void>;
}

export async function startParley(bin: string, env: Record<string, string>, emails = ['ann@parley.test']): Promise<Parley> {
  const fullEnv = {
    PATH: process.env.PATH ?? '',
    PARLEY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'parley-real-data-')), 'data'),
    // The tiny model rambles until its limit: 64 tokens keep each answer short. Parley's limit
    // (`max_tokens`) overrides llama-server's --n-predict, so the rig sets both.
    PARLEY_AI_ANSWER_TOKENS: '64',
    ...env,
  };
  const keys: string[] = [];
  for (const email of emails) {
    const user = Bun.spawnSync([bin, 'user', 'create', '--email', email, '--name', email.split('@')[0]!.replace(/^./, (c) => c.toUpperCase())], { env: fullEnv });
    if (user.exitCode !== 0) throw new Error(`user create failed: ${user.stderr.toString()}`);
    const made = Bun.spawnSync([bin, 'apikey', 'create', '--email', email, '--json'], { env: fullEnv });
    if (made.exitCode !== 0) throw new Error(`apikey create failed: ${made.stderr.toString()}`);
    keys.push(JSON.parse(made.stdout.toString()).key);
  }
  const proc = Bun.spawn([bin, 'serve', '--port', '0'], { env: fullEnv, stdout: 'pipe', stderr: 'pipe' });
  let url: string;
  try {
    url = await waitForListening(proc);
  } catch (err) {
    proc.kill('SIGKILL');
    throw err;
  }
  const output = captureOutput(proc);
  const call = (path: string, body: unknown, key = keys[0]!, signal?: AbortSignal) =>
    fetch(`${url}/api/${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  return {
    url,
    keys,
    call,
    json: async (path, body, key) => (await call(path, body, key)).json(),
    log: output,
    lastLogCause: () =>
      output()
        .split('\n')
        .map((line) => {
          try {
            return JSON.parse(line)?.cause as string | undefined;
          } catch {
            return undefined;
          }
        })
        .filter(Boolean)
        .at(-1),
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/** The `data` objects of an event stream's frames, as they arrive (comment lines skipped), until it ends or `signal` aborts. */
export async function* readEvents(res: Response, signal?: AbortSignal): AsyncGenerator<any> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const abort = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', abort);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      for (let at = buf.indexOf('\n\n'); at >= 0; at = buf.indexOf('\n\n')) {
        const block = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data) yield JSON.parse(data);
      }
    }
  } finally {
    signal?.removeEventListener('abort', abort);
    await reader.cancel().catch(() => undefined);
  }
}
