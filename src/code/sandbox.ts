import { Buffer } from 'node:buffer';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../log';
import { createTurnstile, type Turnstile } from '../http/turnstile';
import type { CodeLanguage } from '../ai/ai.types';
import type { SandboxFile, SandboxLimits, SandboxReply } from './sandbox.protocol';
import { pyodideDir } from './pyodide-dir';
import { readLines } from './read-lines';

/** What one run of code gave. */
export interface RunResult {
  output: string;
  error?: string;
  files: { name: string; bytes: Uint8Array }[];
  notes: string[];
}

/** One child process with a Python and a JavaScript interpreter, kept for one turn's calls. */
export interface Sandbox {
  run(code: string, language?: CodeLanguage): Promise<RunResult>;
  /** Ends the child and gives its place back. */
  close(): void;
  readonly closed: boolean;
}

/** The server's sandboxes: at most PARLEY_CODE_MAX_SANDBOXES children at once, the others wait. */
export interface Sandboxes {
  /** A new interpreter holding `files` in its data directory; waits for a place (`signal` gives up). */
  open(files: SandboxFile[], signal?: AbortSignal): Promise<Sandbox>;
  readonly running: number;
}

/** How often a child's memory is looked at. */
const WATCH_MS = 100;
/** Characters of output a run keeps. */
export const OUTPUT_CHARS = 16_000;

export class SandboxError extends Error {}

/** `executable`: run children as `<executable> sandbox` (a benchmark of the compiled binary from source). */
export function createSandboxes(config: Config, log: Logger, opts: { executable?: string } = {}): Sandboxes {
  const places: Turnstile = createTurnstile(config.codeMaxSandboxes);
  return {
    get running() {
      return places.running;
    },
    async open(files, signal) {
      const found = pyodideDir(config.pyodideDir);
      if ('missing' in found) throw new SandboxError(`Python is not available on this server: ${found.missing}. An admin can fix it: \`parley doctor\` says how.`);
      const release = await places.acquire(signal);
      try {
        return await startChild(config, log, found.dir, [...networkIsolation(), ...(opts.executable ? [opts.executable, 'sandbox'] : childCommand())], files, release);
      } catch (err) {
        release();
        throw err;
      }
    },
  };
}

/**
 * The command that runs a child with no network: `unshare` into new user and network namespaces
 * (the child then sees a loopback that is down), when this machine allows it. Asked once, at the
 * first sandbox, not when the app is built (every CLI command and test builds one).
 */
export function networkIsolation(): string[] {
  if (isolation) return isolation;
  const unshare = Bun.which('unshare');
  if (!unshare) return (isolation = []);
  const probe = Bun.spawnSync([unshare, '--user', '--map-root-user', '--net', 'true'], { stdout: 'ignore', stderr: 'ignore' });
  return (isolation = probe.exitCode === 0 ? [unshare, '--user', '--map-root-user', '--net'] : []);
}
let isolation: string[] | undefined;

/** The child's command: this executable's hidden `sandbox` command, or the child's module when run from source. */
function childCommand(): string[] {
  if (import.meta.path.startsWith('/$bunfs/') || import.meta.path.startsWith('B:/~BUN/')) return [process.execPath, 'sandbox'];
  return [process.execPath, join(import.meta.dir, 'sandbox-main.ts')];
}

async function startChild(config: Config, log: Logger, dir: string, command: string[], files: SandboxFile[], release: () => void): Promise<Sandbox> {
  const limits: SandboxLimits = {
    outputChars: OUTPUT_CHARS,
    scratchBytes: config.codeScratchMb * 1024 * 1024,
    fileBytes: Math.min(config.filesMaxBytes, config.codeScratchMb * 1024 * 1024),
    ...(config.pyodidePackagesDir ? { packagesDir: config.pyodidePackagesDir } : {}),
    // A quarter of the child's memory: Python takes about half before any code runs (docs/code-interpreter.md).
    jsMemoryBytes: Math.floor((config.codeMemoryMb * 1024 * 1024) / 4),
    timeoutS: config.codeTimeoutS,
  };
  // An empty working directory and no environment: nothing of the server's (its secrets) is the child's.
  const cwd = mkdtempSync(join(tmpdir(), 'parley-sandbox-'));
  const child = Bun.spawn([...command, '--pyodide-dir', dir, '--limits', JSON.stringify(limits)], {
    cwd,
    env: {},
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const maxRss = config.codeMemoryMb * 1024 * 1024;
  let killedFor: string | undefined;
  const kill = (why: string) => {
    killedFor ??= why;
    child.kill('SIGKILL');
  };
  // The child's memory is its own: past the limit it is ended, whatever it was doing.
  const watch = setInterval(() => {
    const rss = rssOf(child.pid);
    if (rss > maxRss) kill(`The code used more than ${config.codeMemoryMb} MB of memory (PARLEY_CODE_MEMORY_MB) and was stopped.`);
  }, WATCH_MS);
  let closed = false;
  const ended = child.exited.then(() => {
    clearInterval(watch);
    rmSync(cwd, { recursive: true, force: true });
    if (!closed) {
      closed = true;
      release();
    }
  });
  const replies = readReplies(child.stdout);
  const next = async (waitMs: number, what: string): Promise<SandboxReply> => {
    const timer = setTimeout(() => kill(what), waitMs);
    try {
      const r = await replies.next();
      if (r.done) {
        await ended;
        const stderr = (await new Response(child.stderr).text().catch(() => '')).slice(-2000);
        if (!killedFor) log.warn('a code sandbox ended unexpectedly', { exitCode: child.exitCode, stderr });
        throw new SandboxError(killedFor ?? 'The code sandbox ended unexpectedly.');
      }
      if (r.value.parley === 'fatal') throw new SandboxError(r.value.error);
      return r.value;
    } finally {
      clearTimeout(timer);
    }
  };
  const send = (obj: unknown) => {
    child.stdin.write(`${JSON.stringify(obj)}\n`);
    child.stdin.flush();
  };
  const sandbox: Sandbox = {
    get closed() {
      return closed;
    },
    async run(code, language = 'python') {
      if (closed) throw new SandboxError('The code sandbox has ended.');
      send({ op: 'run', code, language });
      const r = await next(config.codeTimeoutS * 1000, `The code ran longer than ${config.codeTimeoutS} s (PARLEY_CODE_TIMEOUT_S) and was stopped.`);
      if (r.parley !== 'result') throw new SandboxError('The code sandbox answered out of turn.');
      return { output: r.output, ...(r.error ? { error: r.error } : {}), files: r.files.map((f) => ({ name: f.name, bytes: Buffer.from(f.data, 'base64') })), notes: r.notes };
    },
    close() {
      if (closed) return;
      closed = true;
      child.kill('SIGKILL');
      release();
    },
  };
  try {
    // Loading Pyodide takes a few seconds on a small board: more than a run's time.
    await next(Math.max(60_000, config.codeTimeoutS * 1000), 'Python took too long to start.');
    send({ op: 'files', files });
    await next(config.codeTimeoutS * 1000, 'The files took too long to copy into the sandbox.');
  } catch (err) {
    sandbox.close();
    throw err;
  }
  return sandbox;
}

/** Resident memory of a process in bytes (0 once it is gone). */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function* readReplies(stream: ReadableStream<Uint8Array>): AsyncGenerator<SandboxReply> {
  // Only the protocol's lines: anything else the runtime might print is not a reply.
  for await (const line of readLines(stream)) if (line.startsWith('{"parley":')) yield JSON.parse(line) as SandboxReply;
}

/** How long a turn's interpreter waits for the turn's next call before it is ended. */
export const IDLE_MS = 60_000;

/**
 * The interpreters of the turns running now, one per turn (its response id): a turn's calls share
 * one, so what the first call defined the second still has (docs/code-interpreter.md, "State").
 * One is ended when its turn ends, when it has waited IDLE_MS for a next call, or when another
 * turn needs its place while it waits (the longest waiting first).
 */
export interface TurnSandboxes {
  /**
   * Run `code` in the turn's interpreter, opened with `files()` when it has none. `restarted`: the
   * turn had one that ended (a limit passed), so what earlier calls defined is gone.
   */
  run(key: string, code: string, files: () => Promise<SandboxFile[]>, signal?: AbortSignal, language?: CodeLanguage): Promise<{ result: RunResult; restarted: boolean }>;
  endTurn(key: string): void;
  closeAll(): void;
}

export function createTurnSandboxes(sandboxes: Sandboxes, max: number): TurnSandboxes {
  const live = new Map<string, { sandbox: Sandbox; idle?: Timer; busy: boolean; lastUsed: number }>();
  const end = (key: string) => {
    const s = live.get(key);
    if (!s) return;
    clearTimeout(s.idle);
    s.sandbox.close();
    live.delete(key);
  };
  /** A place for a new interpreter: the one that has waited longest for its turn's next call gives its own. */
  const makeRoom = () => {
    if (sandboxes.running < max) return;
    const idle = [...live.entries()].filter(([, s]) => !s.busy && !s.sandbox.closed).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    if (idle[0]) end(idle[0][0]);
  };
  return {
    async run(key, code, files, signal, language) {
      let held = live.get(key);
      const restarted = held !== undefined && held.sandbox.closed;
      if (!held || held.sandbox.closed) {
        if (held) clearTimeout(held.idle);
        makeRoom();
        const sandbox = await sandboxes.open(await files(), signal);
        if (!live.has(key)) signal?.addEventListener('abort', () => end(key), { once: true });
        held = { sandbox, busy: false, lastUsed: Date.now() };
        live.set(key, held);
      }
      clearTimeout(held.idle);
      held.busy = true;
      try {
        return { result: await held.sandbox.run(code, language), restarted };
      } finally {
        held.busy = false;
        held.lastUsed = Date.now();
        held.idle = setTimeout(() => end(key), IDLE_MS);
      }
    },
    endTurn: end,
    closeAll() {
      for (const key of [...live.keys()]) end(key);
    },
  };
}
