/**
 * The JavaScript side of a sandbox run, evaluated once inside QuickJS before any user code
 * (javascript-runner.ts). It takes the host's four functions (`print`, and `read`, `write`, `list`,
 * which reach DATA_DIR only) and builds what the code sees: `console` (its lines captured) and `fs`. The host
 * object itself is kept in this closure, never a global. Returns `show`: a value written as the
 * model reads it (strings quoted, objects as JSON), used for console arguments and the last
 * expression's value.
 */
export const JAVASCRIPT_PRELUDE = String.raw`
(function (host) {
  'use strict';
  const fnName = (f) => '[Function ' + (f.name || 'anonymous') + ']';
  function plain(v, seen) {
    if (typeof v === 'bigint') return v + 'n';
    if (typeof v === 'function') return fnName(v);
    if (typeof v === 'symbol') return String(v);
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    if (v === undefined) return 'undefined';
    if (v === null || typeof v !== 'object') return v;
    if (seen.has(v)) return '[Circular]';
    seen.add(v);
    let out;
    if (v instanceof Error) out = v.name + ': ' + v.message;
    else if (v instanceof Map) out = { Map: [...v].map(([k, x]) => [plain(k, seen), plain(x, seen)]) };
    else if (v instanceof Set) out = { Set: [...v].map((x) => plain(x, seen)) };
    else if (ArrayBuffer.isView(v)) out = v.constructor.name + '(' + v.length + ') [' + Array.prototype.slice.call(v, 0, 50).join(', ') + (v.length > 50 ? ', …' : '') + ']';
    else if (v instanceof Date) out = isNaN(v) ? 'Invalid Date' : v.toISOString();
    else if (Array.isArray(v)) out = v.map((x) => plain(x, seen));
    else {
      out = {};
      for (const k of Object.keys(v)) out[k] = plain(v[k], seen);
    }
    seen.delete(v);
    return out;
  }
  function show(v) {
    if (typeof v === 'string') return JSON.stringify(v);
    const p = plain(v, new Set());
    // A string here is already written out (a function, an error, a date); the rest is JSON.
    return typeof p === 'string' ? p : JSON.stringify(p);
  }
  const line = (args) => args.map((a) => (typeof a === 'string' ? a : show(a))).join(' ');
  const log = (...args) => host.print(line(args));
  globalThis.console = { log, info: log, warn: log, error: log, debug: log, table: log, dir: log };
  globalThis.fs = Object.freeze({
    /** The file's text (UTF-8), or its bytes (a Uint8Array) with encoding null. */
    readFile(path, encoding = 'utf8') {
      if (encoding === null || encoding === 'binary' || encoding === 'bytes') return new Uint8Array(host.read(String(path), false));
      if (encoding !== 'utf8' && encoding !== 'utf-8') throw new TypeError('fs.readFile reads UTF-8 text, or bytes with encoding null');
      return host.read(String(path), true);
    },
    /** Writes text (UTF-8) or bytes (an ArrayBuffer or typed array) to a file under /mnt/data. */
    writeFile(path, data) {
      if (typeof data === 'string') return host.write(String(path), data);
      if (data instanceof ArrayBuffer) return host.write(String(path), data.slice(0));
      if (ArrayBuffer.isView(data)) return host.write(String(path), data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
      return host.write(String(path), String(data));
    },
    /** The names in a directory under /mnt/data (itself by default). */
    listdir(path = '/mnt/data') {
      return JSON.parse(host.list(String(path)));
    },
  });
  return show;
})
`;
