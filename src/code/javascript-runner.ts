import { posix } from 'node:path';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import wasmPath from '@jitl/quickjs-wasmfile-release-sync/wasm' with { type: 'file' };
import { newQuickJSWASMModuleFromVariant, newVariant, shouldInterruptAfterDeadline, type QuickJSContext, type QuickJSHandle, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import { DATA_DIR } from './sandbox.protocol';
import { JAVASCRIPT_PRELUDE } from './javascript-prelude';

/**
 * JavaScript in a sandbox child (docs/code-interpreter.md, "JavaScript"): QuickJS compiled to
 * WebAssembly, its own heap and stack inside the child's memory. QuickJS has no files, network,
 * timers or modules of its own; the code gets `console` (its lines captured like Python's
 * prints) and `fs`, whose few functions read and write the turn's files under DATA_DIR in the
 * same in-memory file system Python sees, so both languages of a turn share them.
 */

/** The part of Pyodide's file system (MEMFS) the JavaScript side is let near. */
export interface DataFs {
  readFile(path: string, opts?: { encoding: 'utf8' }): Uint8Array | string;
  writeFile(path: string, data: Uint8Array | string): void;
  readdir(path: string): string[];
  stat(path: string): { size: number; mode: number };
  isFile(mode: number): boolean;
  isDir(mode: number): boolean;
}

export interface JavaScriptLimits {
  /** Bytes QuickJS's heap may take. */
  memoryBytes: number;
  /** Wall time of one run; QuickJS stops it itself just before the server's kill would. */
  timeoutS: number;
  /** Bytes the files under DATA_DIR may hold together. */
  scratchBytes: number;
}

/** The linear memory QuickJS's build starts with (its INITIAL_MEMORY), and WebAssembly's page. */
const BASE_BYTES = 16 * 1024 * 1024;
const PAGE = 64 * 1024;
/** QuickJS's stack: deep enough for ordinary recursion, well within WebAssembly's own. */
const STACK_BYTES = 256 * 1024;
/** Names code written for Node, Bun or a browser reaches for; absent here, and the error says what there is instead. */
const ABSENT = new Set(['require', 'process', 'Bun', 'Deno', 'fetch', 'XMLHttpRequest', 'WebSocket', 'module', 'exports', 'setTimeout', 'setInterval', 'Buffer', '__dirname']);
const HINT = `This sandbox runs plain JavaScript (QuickJS): no modules, network, timers, Node or Bun; the files in ${DATA_DIR} are read and written through fs.readFile, fs.writeFile and fs.listdir.`;

/**
 * QuickJS's WebAssembly (embedded in the executable), compiled, and the one linear memory its
 * interpreters use in turn: it cannot grow past the limit (QuickJS's own limit counts one
 * allocation's size, not their sum, in this WebAssembly build, whose malloc cannot tell a block's
 * size: it refuses one huge string, not a pile of arrays). One memory for the child's life, not
 * one per interpreter: a dropped interpreter's memory would be the garbage collector's to give
 * back, whenever it does, and a new one could fill another meanwhile. Made before the child's
 * lock-down: it reads a file.
 */
export async function loadQuickJs(memoryBytes: number): Promise<QuickJs> {
  const compiled = await WebAssembly.compile(await Bun.file(wasmPath).arrayBuffer());
  return { compiled, memory: new WebAssembly.Memory({ initial: BASE_BYTES / PAGE, maximum: Math.ceil((BASE_BYTES + memoryBytes) / PAGE) }) };
}

export interface QuickJs {
  compiled: WebAssembly.Module;
  memory: WebAssembly.Memory;
}

/** What a run gave; `reset`: the interpreter was stopped at its memory and is gone with its names. */
export type JavaScriptRun = { value?: string; error?: string; reset?: boolean };

/**
 * One JavaScript interpreter for a turn: globals stay between runs. `print` takes each console
 * line. Each is a WebAssembly instance of its own on the shared memory, wiped first (its static
 * data expects zeroes), so one stopped at its memory is dropped whole and the next starts afresh;
 * the one before must never be called again.
 */
export async function createJavaScript(quickJs: QuickJs, fs: DataFs, limits: JavaScriptLimits, print: (line: string) => void): Promise<(code: string) => JavaScriptRun> {
  new Uint8Array(quickJs.memory.buffer).fill(0);
  const qjs: QuickJSWASMModule = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule: quickJs.compiled, wasmMemory: quickJs.memory }));
  const runtime = qjs.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(STACK_BYTES);
  // No loader: `import()` rejects with QuickJS's own error, which the hint below explains.
  const vm = runtime.newContext();
  const show = installHost(vm, fs, limits.scratchBytes, print);
  const timeoutMs = limits.timeoutS * 1000;
  const stopped = {
    interrupted: `The code ran longer than ${limits.timeoutS} s (PARLEY_CODE_TIMEOUT_S) and was stopped.`,
    memory: `The code used more than ${Math.round(limits.memoryBytes / 1024 / 1024)} MB of JavaScript memory and was stopped.`,
    afresh: 'JavaScript starts afresh at the next call: names defined by earlier calls are gone.',
  };
  let broken = false;
  return (code) => {
    // Stopped by QuickJS a little before the server would kill the child: the names defined so far stay.
    runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + Math.max(timeoutMs - 1000, timeoutMs * 0.8)));
    try {
      const r = vm.evalCode(code, 'code.js');
      if (r.error) {
        const error = errorText(vm, r.error, stopped);
        // Out of memory, the interpreter may be left short of it for anything: it goes, and the next call makes another.
        return error === stopped.memory ? { error: `${stopped.memory} ${stopped.afresh}`, reset: true } : { error };
      }
      let value: QuickJSHandle = r.value;
      // Promise callbacks run now (there is no event loop after the run); a promise's outcome is the run's.
      const jobs = runtime.executePendingJobs();
      if (jobs.error) {
        value.dispose();
        return { error: errorText(vm, jobs.error, stopped) };
      }
      jobs.dispose();
      if (vm.typeof(value) === 'object' && isPromise(vm, value)) {
        const state = vm.getPromiseState(value);
        value.dispose();
        if (state.type === 'pending') return { error: 'The code\'s promise had not settled when the code ended (there are no timers or I/O to wait for here).' };
        if (state.type === 'rejected') return { error: errorText(vm, state.error, stopped) };
        value = state.value;
      }
      if (vm.typeof(value) === 'undefined') return value.dispose(), {};
      const shown = vm.callFunction(show, vm.undefined, value);
      value.dispose();
      if (shown.error) return { error: errorText(vm, shown.error, stopped) };
      const text = vm.getString(shown.value);
      shown.value.dispose();
      return { value: text };
    } catch (err) {
      // The interpreter itself failed (native recursion, as in JSON.stringify of an array nested a
      // million deep, exhausts the host's stack past QuickJS's own check): it is not trusted again.
      broken = true;
      return { error: `The code broke the JavaScript interpreter (${err instanceof Error ? err.message : String(err)}) and was stopped; too deep a nesting does this. ${stopped.afresh}`, reset: true };
    } finally {
      if (!broken) runtime.removeInterruptHandler();
    }
  };
}

function isPromise(vm: QuickJSContext, h: QuickJSHandle): boolean {
  const ctor = vm.getProp(h, 'constructor');
  const promise = vm.getProp(vm.global, 'Promise');
  try {
    return vm.sameValue(ctor, promise);
  } finally {
    ctor.dispose();
    promise.dispose();
  }
}

/** An exception as the model reads it: its name and message, the lines of the code it went through. */
function errorText(vm: QuickJSContext, handle: QuickJSHandle, stopped: { interrupted: string; memory: string; afresh: string }): string {
  const e = vm.dump(handle) as unknown;
  handle.dispose();
  if (e === null || typeof e !== 'object') return `Uncaught ${typeof e === 'string' ? JSON.stringify(e) : String(e)}`;
  const { name, message, stack } = e as { name?: string; message?: string; stack?: string };
  if (name === 'InternalError' && message === 'interrupted') return stopped.interrupted;
  if (name === 'InternalError' && message === 'out of memory') return stopped.memory;
  const lines = String(stack ?? '').split('\n').filter((l) => l.includes('code.js')).slice(-5);
  if (name === 'InternalError' && message === 'stack overflow') return [`${name}: ${message} (the recursion is too deep for this sandbox)`, ...lines.slice(-2)].join('\n');
  const missing = name === 'ReferenceError' && /^'?(\w+)'? is not defined$/.exec(String(message))?.[1];
  const absent = (missing && ABSENT.has(missing)) || /^could not load module/.test(String(message));
  return [`${name ?? 'Error'}: ${message ?? ''}`, ...lines, ...(absent ? [HINT] : [])].join('\n');
}

/**
 * Gives the code `console` and `fs` (javascript-prelude.ts builds them on three host functions
 * that only reach DATA_DIR) and returns the prelude's `show`, which writes a value as text.
 */
function installHost(vm: QuickJSContext, fs: DataFs, scratchBytes: number, print: (line: string) => void): QuickJSHandle {
  const host = vm.newObject();
  const fn = (name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined) => {
    const h = vm.newFunction(name, impl);
    vm.setProp(host, name, h);
    h.dispose();
  };
  fn('print', (line) => void print(vm.getString(line)));
  fn('read', (path, asText) => {
    const p = inData(vm.getString(path));
    if (vm.dump(asText)) return vm.newString(onFs(p, () => fs.readFile(p, { encoding: 'utf8' }) as string));
    return vm.newArrayBuffer(onFs(p, () => fs.readFile(p) as Uint8Array).slice().buffer);
  });
  fn('write', (path, data) => {
    const p = inData(vm.getString(path));
    const bytes = vm.typeof(data) === 'string' ? new TextEncoder().encode(vm.getString(data)) : copyBytes(vm, data);
    const others = listData(fs).filter(([name]) => posix.join(DATA_DIR, name) !== p).reduce((n, [, size]) => n + size, 0);
    if (others + bytes.length > scratchBytes) throw new Error(`The files in ${DATA_DIR} would hold more than the ${scratchBytes} bytes this sandbox has: ${p} was not written.`);
    onFs(p, () => fs.writeFile(p, bytes));
    return undefined;
  });
  fn('list', (path) => {
    const p = inData(vm.getString(path), true);
    const names = onFs(p, () => fs.readdir(p)).filter((n) => n !== '.' && n !== '..').sort();
    return vm.newString(JSON.stringify(names));
  });
  const prelude = vm.evalCode(JAVASCRIPT_PRELUDE, 'parley.js');
  const setup = vm.unwrapResult(prelude);
  const show = vm.unwrapResult(vm.callFunction(setup, vm.undefined, host));
  setup.dispose();
  host.dispose();
  return show;
}

function copyBytes(vm: QuickJSContext, data: QuickJSHandle): Uint8Array {
  const view = vm.getArrayBuffer(data);
  try {
    return view.value.slice();
  } finally {
    view.dispose();
  }
}

/** `path` (relative ones from DATA_DIR) when it is within DATA_DIR; otherwise an error the code gets. */
function inData(path: string, dirItself = false): string {
  const p = posix.resolve(DATA_DIR, path);
  if (p.startsWith(`${DATA_DIR}/`) || (dirItself && p === DATA_DIR)) return p;
  throw new Error(`Only files under ${DATA_DIR} can be read or written in this sandbox, not ${path}.`);
}

/** Emscripten's file errors carry a number only: the code gets Node's words for the common ones. */
const ERRNO: Record<number, string> = { 44: 'ENOENT: no such file or directory', 31: 'EISDIR: is a directory', 54: 'ENOTDIR: not a directory', 2: 'EACCES: permission denied' };
function onFs<T>(path: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    const errno = (err as { errno?: number }).errno;
    if (errno === undefined) throw err;
    throw new Error(`${ERRNO[errno] ?? `file error ${errno}`}, ${path}`);
  }
}

function listData(fs: DataFs): [string, number][] {
  return fs
    .readdir(DATA_DIR)
    .filter((n) => n !== '.' && n !== '..')
    .map((n) => [n, fs.stat(posix.join(DATA_DIR, n))] as const)
    .filter(([, st]) => fs.isFile(st.mode))
    .map(([n, st]) => [n, st.size]);
}
