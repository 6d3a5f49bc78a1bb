/**
 * The real-model rig's model server: llama.cpp's `llama-server`, built once by
 * build-llama-server.sh and cached outside the clone, started on 127.0.0.1 on a port of its own
 * choosing with a given GGUF model, context size and, optionally, a chat template file.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { captureOutput } from './capture-output';

const root = resolve(import.meta.dir, '../..');

/**
 * The cache folder holding `bin/llama-server` and `templates/*.jinja`: PARLEY_LLAMA_SERVER_DIR
 * when the caller already has it (run.sh), otherwise whatever build-llama-server.sh prints
 * (it builds on the first call, ~10 minutes, and answers at once from the cache after that).
 */
export function llamaServerDir(): string {
  const given = process.env.PARLEY_LLAMA_SERVER_DIR;
  if (given) return given;
  const built = Bun.spawnSync(['bash', join(root, 'scripts/real-models/build-llama-server.sh')], { stdout: 'pipe', stderr: 'inherit' });
  if (built.exitCode !== 0) throw new Error('build-llama-server.sh failed (its output is above)');
  return built.stdout.toString().trim().split('\n').at(-1)!;
}

/**
 * The same folder when llama-server is already built, else undefined: never builds. For callers
 * that must not spend ~10 minutes on a build nobody asked for (the benchmark).
 */
export function cachedLlamaServerDir(): string | undefined {
  const given = process.env.PARLEY_LLAMA_SERVER_DIR;
  if (given) return given;
  const found = Bun.spawnSync(['bash', join(root, 'scripts/real-models/build-llama-server.sh'), '--cached'], { env: process.env, stdout: 'pipe', stderr: 'ignore' });
  return found.exitCode === 0 ? found.stdout.toString().trim().split('\n').at(-1) : undefined;
}

/**
 * The GGUF model the rig runs: PARLEY_TEST_MODEL, or the tiny stories260K model in the `shared/`
 * folder that sits beside the clone (in CI exactly as on a developer's machine).
 */
export function testModelPath(): string {
  const path = resolve(root, process.env.PARLEY_TEST_MODEL || '../shared/models/stories260K.gguf');
  if (!existsSync(path)) throw new Error(`the test model ${path} is missing: set PARLEY_TEST_MODEL to a GGUF file`);
  return path;
}

export interface LlamaServerOptions {
  model: string;
  /** Context size in tokens, for the one slot the server runs. */
  contextTokens: number;
  /** `--jinja --chat-template-file` with this file; without it, the server's default template. */
  templateFile?: string;
  /**
   * Tokens an answer may have at most, server-side, for requests that name no limit (Parley's
   * research planner; Parley's own `max_tokens`, PARLEY_AI_ANSWER_TOKENS in parley-binary.ts,
   * overrides it). The tiny model rambles until its context is full; a bound keeps requests short.
   */
  maxAnswerTokens?: number;
  /** `--no-jinja` (no template file): the server's legacy templates, which refuse any request with tools. */
  noJinja?: boolean;
  /** llama-server's `--reasoning` with a template file (default `off`, see below). */
  reasoning?: 'on' | 'off' | 'auto';
  /** More llama-server options, last on its command line (the benchmark's `--temp 0 --seed 1`). */
  extraArgs?: string[];
  dir?: string;
  timeoutMs?: number;
}

export interface LlamaServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** What PARLEY_AI_BASE_URL takes: the API root with `/v1`. */
  apiUrl: string;
  /** What the server printed so far (for a failure's report). */
  log(): string;
  stop(): Promise<void>;
}

export async function startLlamaServer(opts: LlamaServerOptions): Promise<LlamaServer> {
  const dir = opts.dir ?? llamaServerDir();
  const args = [
    join(dir, 'bin/llama-server'),
    '--model', opts.model,
    '--host', '127.0.0.1',
    '--port', '0',
    '--ctx-size', String(opts.contextTokens),
    // One slot: the whole context for one request at a time (the default splits it among several).
    '--parallel', '1',
    // One thread each: the matrix runs two servers side by side on a 2-core machine.
    '--threads', '1',
    '--n-predict', String(opts.maxAnswerTokens ?? 64),
    '--alias', 'tiny',
    // llama-server caps a slot's context at the model's training context (2,048 for the tiny
    // model); the rig needs more room than that for Parley's prompt and tools, so it says the model
    // was trained on as much as asked (quality does not matter here, the request shapes do).
    ...contextOverride(opts.model, opts.contextTokens),
    ...(opts.templateFile ? ['--jinja', '--chat-template-file', opts.templateFile] : []),
    ...(opts.noJinja && !opts.templateFile ? ['--no-jinja'] : []),
    // Thinking templates open a thinking block the tiny model never closes: all it says would be
    // reasoning, never an answer. A real thinking model closes it; here the request shapes are
    // what is tested, so the rig turns thinking off unless a test asks for it.
    ...(opts.templateFile ? ['--reasoning', opts.reasoning ?? 'off'] : []),
    ...(opts.extraArgs ?? []),
  ];
  const proc = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' });
  const output = captureOutput(proc);
  const stop = async () => {
    proc.kill('SIGTERM');
    const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await proc.exited;
    clearTimeout(killer);
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let url: string | undefined;
  // It prints the address once bound, and answers /health 200 once the model is loaded.
  while (Date.now() < deadline && proc.exitCode === null) {
    url ??= /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1];
    if (url) {
      const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
      if (ok) return { url, apiUrl: `${url}/v1`, log: output, stop };
    }
    await Bun.sleep(50);
  }
  await stop();
  throw new Error(`llama-server did not become healthy:\n${output().split('\n').slice(-15).join('\n')}`);
}

function contextOverride(model: string, contextTokens: number): string[] {
  const arch = ggufArchitecture(model);
  return arch ? ['--override-kv', `${arch}.context_length=int:${contextTokens}`] : [];
}

/** `general.architecture` from a GGUF file's header (the key the training context is stored under starts with it). */
export function ggufArchitecture(path: string): string | undefined {
  const buf = Buffer.alloc(256 * 1024);
  const fd = openSync(path, 'r');
  const size = readSync(fd, buf, 0, buf.length, 0);
  closeSync(fd);
  if (buf.toString('latin1', 0, 4) !== 'GGUF') return undefined;
  // magic, version (u32), tensor count (u64), key-value count (u64), then the key-value pairs.
  let at = 24;
  const kvCount = Number(buf.readBigUInt64LE(16));
  const FIXED: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const readString = () => {
    const len = Number(buf.readBigUInt64LE(at));
    const text = buf.toString('utf8', at + 8, at + 8 + len);
    at += 8 + len;
    return text;
  };
  const skip = (type: number): void => {
    if (type === 8) return void readString();
    if (type === 9) {
      const inner = buf.readUInt32LE(at);
      const count = Number(buf.readBigUInt64LE(at + 4));
      at += 12;
      if (inner in FIXED) at += FIXED[inner]! * count;
      else for (let i = 0; i < count && at < size; i++) skip(inner);
      return;
    }
    at += FIXED[type] ?? Infinity;
  };
  try {
    for (let i = 0; i < kvCount && at < size - 12; i++) {
      const key = readString();
      const type = buf.readUInt32LE(at);
      at += 4;
      if (key === 'general.architecture' && type === 8) return readString();
      skip(type);
    }
  } catch {
    // A header larger than what was read: no override, the server's own cap applies.
  }
  return undefined;
}
