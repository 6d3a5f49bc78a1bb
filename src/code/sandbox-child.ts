import { Buffer } from 'node:buffer';
import { loadPyodide, type PyodideAPI } from 'pyodide';
import { DATA_DIR, type SandboxFile, type SandboxLimits, type SandboxReply, type SandboxRequest } from './sandbox.protocol';
import { lockDown } from './lock-down';
import { createJavaScript, loadQuickJs, type JavaScriptRun } from './javascript-runner';
import { PYTHON_DRIVER } from './python-driver';
import { readLines } from './read-lines';

/**
 * The sandbox child (`parley sandbox`): one Python interpreter (Pyodide, WebAssembly) for one
 * turn, in a process of its own so that its memory is its own and the server can kill it
 * (src/code/sandbox.ts watches its time and memory). It loads Pyodide from `pyodideDir`, takes
 * away everything that reaches outside (lock-down.ts) and only then reads code from stdin.
 */
export async function runSandboxChild(pyodideDir: string, limits: SandboxLimits): Promise<void> {
  const stdout = process.stdout;
  const hash = Bun.hash;
  const exit = process.exit.bind(process);
  const send = (reply: SandboxReply) => stdout.write(`${JSON.stringify(reply)}\n`);
  const lines = readLines(Bun.stdin.stream());
  let printed = '';
  let cut = false;
  const print = (s: string) => {
    if (printed.length >= limits.outputChars) return void (cut = true);
    printed += `${s}\n`;
  };
  let py: PyodideAPI;
  try {
    py = await loadPyodide({
      indexURL: pyodideDir.endsWith('/') ? pyodideDir : `${pyodideDir}/`,
      stdout: print,
      stderr: print,
      // No packages from the internet: only the admin's directory (docs/code-interpreter.md).
      ...(limits.packagesDir ? { packageBaseUrl: `${limits.packagesDir}/`, lockFileURL: `${limits.packagesDir}/pyodide-lock.json` } : {}),
      env: { HOME: '/home/pyodide' },
    });
  } catch (err) {
    send({ parley: 'fatal', error: `Python could not start: ${err instanceof Error ? err.message : String(err)}` });
    return exit(1);
  }
  const loadImports = limits.packagesDir ? py.loadPackagesFromImports.bind(py) : undefined;
  py.FS.mkdirTree(DATA_DIR);
  py.FS.chdir(DATA_DIR);
  const driver = py.runPython(PYTHON_DRIVER, { filename: '<parley>' }) as (code: string) => Promise<{ toJs(): [string | null, string | null]; destroy(): void }>;
  // Loaded before the lock-down (it reads its WebAssembly); an interpreter made at the turn's first JavaScript call.
  const quickJs = await loadQuickJs(limits.jsMemoryBytes);
  let javascript: ((code: string) => JavaScriptRun) | undefined;
  lockDown(py);
  send({ parley: 'ready' });

  let before = new Map<string, string>();
  for await (const line of lines) {
    const req = JSON.parse(line) as SandboxRequest;
    if (req.op === 'files') {
      for (const f of req.files) py.FS.writeFile(`${DATA_DIR}/${f.name}`, Buffer.from(f.data, 'base64'));
      before = fingerprints(py, hash);
      send({ parley: 'files' });
      continue;
    }
    printed = '';
    cut = false;
    let error: string | undefined;
    let value: string | undefined;
    if (req.language === 'javascript') {
      try {
        javascript ??= await createJavaScript(quickJs, py.FS, { memoryBytes: limits.jsMemoryBytes, timeoutS: limits.timeoutS, scratchBytes: limits.scratchBytes }, print);
        const r = javascript(req.code);
        ({ value, error } = r);
        if (r.reset) javascript = undefined;
      } catch (err) {
        error = `JavaScript could not start: ${err instanceof Error ? err.message : String(err)}`;
      }
    } else {
      try {
        // Quietly: a package that is not there is the import's own error, with the hint (python-driver.ts).
        if (loadImports) await loadImports(req.code, { messageCallback: () => {}, errorCallback: () => {} }).catch(() => undefined);
        const r = await driver(req.code);
        const [v, e] = r.toJs();
        r.destroy();
        value = v ?? undefined;
        error = e ?? undefined;
      } catch (err) {
        error = err instanceof Error ? err.message.split('\n').slice(-3).join('\n') : String(err);
      }
    }
    let output = printed;
    if (value !== undefined && !cut) output += value.length > limits.outputChars - output.length ? `${value.slice(0, Math.max(0, limits.outputChars - output.length))}` : value;
    if (cut || output.length >= limits.outputChars) output = `${output.slice(0, limits.outputChars)}\n[output cut at ${limits.outputChars} characters]`;
    const after = fingerprints(py, hash);
    const total = [...after.values()].reduce((n, f) => n + Number(f.split(':')[0]), 0);
    const notes: string[] = [];
    const files: SandboxFile[] = [];
    if (total > limits.scratchBytes) {
      error = `${error ? `${error}\n` : ''}The files in ${DATA_DIR} hold ${total} bytes, more than the ${limits.scratchBytes} this sandbox has: none are kept.`;
      for (const name of after.keys()) if (!before.has(name)) py.FS.unlink(`${DATA_DIR}/${name}`);
    } else {
      for (const [name, print] of after) {
        if (before.get(name) === print) continue;
        const size = Number(print.split(':')[0]);
        if (size > limits.fileBytes) notes.push(`${name} is ${size} bytes, more than one file may be (${limits.fileBytes}): not kept.`);
        else files.push({ name, data: Buffer.from(py.FS.readFile(`${DATA_DIR}/${name}`)).toString('base64') });
      }
    }
    before = after;
    send({ parley: 'result', output, ...(error ? { error } : {}), files, notes });
  }
  exit(0);
}

/** Size and a hash of each regular file directly under DATA_DIR: what tells a file the run wrote or changed. */
function fingerprints(py: PyodideAPI, hash: typeof Bun.hash): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of py.FS.readdir(DATA_DIR) as string[]) {
    if (name === '.' || name === '..') continue;
    const path = `${DATA_DIR}/${name}`;
    const st = py.FS.stat(path) as { size: number; mode: number };
    if (py.FS.isFile(st.mode)) out.set(name, `${st.size}:${hash(py.FS.readFile(path) as Uint8Array)}`);
  }
  return out;
}
