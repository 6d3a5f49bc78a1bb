import type { PyodideAPI } from 'pyodide';

/**
 * What a sandbox child takes away once Pyodide is loaded and before any user code runs
 * (docs/code-interpreter.md, "Isolation"). Python reaches JavaScript through Pyodide's `js` and
 * `pyodide.ffi` (python-driver.ts makes them unimportable, but Python is no sandbox of its own),
 * so the JavaScript side is left with nothing that reaches outside either: no network (fetch,
 * XMLHttpRequest, WebSocket), no process, Bun or require (files, children), no workers, and no way
 * to compile new JavaScript from a string (eval, Function and its kin, hence no `import()` of
 * node:fs either). Pyodide's own ways to the host's files (NODEFS, mountNodeFS, its file and
 * package loaders) go too: the interpreter's file system is memory only.
 */
export function lockDown(py: PyodideAPI): void {
  const g = globalThis as Record<string, unknown>;
  // The \`js\` module is globalThis itself: Python gets an empty one in its place.
  py.unregisterJsModule('js');
  py.registerJsModule('js', {});
  // \`pyodide_js\` is this API object: what is left of it below is unreachable from Python too.
  py.unregisterJsModule('pyodide_js');
  py.registerJsModule('pyodide_js', {});
  for (const name of [
    'fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'Request', 'Response', 'Headers', 'FormData',
    'process', 'require', 'module', 'exports', 'Deno', 'navigator', 'importScripts',
    'Worker', 'SharedWorker', 'BroadcastChannel', 'MessageChannel', 'Buffer', 'ShadowRealm', 'Loader',
    'alert', 'prompt', 'confirm', 'open', 'reportError',
  ]) {
    try {
      delete g[name];
    } catch {}
    if (g[name] !== undefined) throw new Error(`the sandbox could not take away ${name}`);
  }
  // \`Bun\` itself cannot be deleted (a read-only global), nor a few of its fields (fetch among
  // them): the rest go; the process-level isolation (sandbox.ts: no network namespace) is what
  // stands behind these.
  const bun = g.Bun as Record<PropertyKey, unknown>;
  for (const k of Reflect.ownKeys(bun)) {
    try {
      delete bun[k];
    } catch {}
  }
  // A console would write into the server's reading of this child's stdout.
  const quiet = () => {};
  for (const k of Object.keys(console)) (console as unknown as Record<string, unknown>)[k] = quiet;

  const refuse = function () {
    throw new Error('JavaScript cannot be compiled in this sandbox.');
  };
  // Pyodide calls \`Function.prototype.apply\`: the stand-in keeps the prototype, not the compiler.
  refuse.prototype = Function.prototype;
  for (const fn of [function () {}, async function () {}, function* () {}, async function* () {}]) {
    Object.defineProperty(Object.getPrototypeOf(fn), 'constructor', { value: refuse, writable: false, configurable: false });
  }
  g.Function = refuse;
  g.eval = refuse;

  // Emscripten's sockets are WebSockets the runtime opened at load time: refused here, since
  // Python's socket module would otherwise dial out through them.
  const m = (py as unknown as { _module: { SOCKFS: Record<string, unknown>; FS: { ErrnoError: new (errno: number) => Error }; ERRNO_CODES: Record<string, number> } })._module;
  const denied = () => {
    throw new m.FS.ErrnoError(m.ERRNO_CODES.EACCES ?? 2);
  };
  m.SOCKFS.createSocket = denied;
  for (const k of Object.keys(m.SOCKFS.websocket_sock_ops as object)) (m.SOCKFS.websocket_sock_ops as Record<string, unknown>)[k] = denied;
  const api = py as unknown as Record<string, unknown>;
  for (const name of ['mountNodeFS', 'mountNativeFS', 'loadPackage', 'loadPackagesFromImports', 'setStdout', 'setStderr', 'setStdin', 'pyodide_py', '_module', '_api']) {
    try {
      api[name] = undefined;
    } catch {}
  }
  const fs = py.FS as unknown as Record<string, unknown> & { filesystems: Record<string, unknown>; mount: (type: unknown, opts: unknown, at: string) => unknown };
  // These read a path or URL of the host's into the file system (Node's fs under them).
  for (const name of ['createPreloadedFile', 'createLazyFile', 'forceLoadFile', 'preloadFile']) {
    fs[name] = () => {
      throw new Error('Files come into this sandbox only as the turn\'s attachments.');
    };
  }
  const memfs = fs.filesystems.MEMFS;
  for (const k of Object.keys(fs.filesystems)) if (k !== 'MEMFS') delete fs.filesystems[k];
  const mount = fs.mount.bind(fs);
  fs.mount = (type, opts, at) => {
    if (type !== memfs) throw new Error('Only memory file systems are mounted in this sandbox.');
    return mount(type, opts, at);
  };
}
