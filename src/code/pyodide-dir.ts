import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { embeddedPyodide } from './embedded-pyodide';

/** The files Pyodide loads from its directory (the npm package's core and standard library). */
export const PYODIDE_FILES = ['pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'] as const;

/**
 * Where Pyodide's files are: `PARLEY_PYODIDE_DIR` when set; in the executable, its own embedded
 * copy (zstd-compressed by scripts/build.ts), written out once under the temp directory; from
 * source, the npm package's directory. `undefined` with the reason when none is usable.
 */
export function pyodideDir(configured: string | undefined): { dir: string } | { missing: string } {
  if (configured) {
    const gone = PYODIDE_FILES.filter((f) => !existsSync(join(configured, f)));
    return gone.length ? { missing: `PARLEY_PYODIDE_DIR (${configured}) lacks ${gone.join(', ')}` } : { dir: configured };
  }
  if (embeddedPyodide.length) return { dir: writtenOut() };
  try {
    return { dir: dirname(Bun.resolveSync('pyodide/package.json', import.meta.dir)) };
  } catch {
    return { missing: 'Pyodide is not installed: set PARLEY_PYODIDE_DIR' };
  }
}

let written: string | undefined;

/** The embedded files, decompressed into a directory named after their contents (kept across restarts). */
function writtenOut(): string {
  if (written) return written;
  const tag = Bun.hash(embeddedPyodide.map((f) => f.path).join('|')).toString(36);
  const dir = join(tmpdir(), `parley-pyodide-${tag}`);
  if (!PYODIDE_FILES.every((f) => existsSync(join(dir, f)))) {
    // Written beside and renamed: two servers starting at once never see half a directory.
    const part = `${dir}.${process.pid}.part`;
    rmSync(part, { recursive: true, force: true });
    mkdirSync(part, { recursive: true });
    for (const f of embeddedPyodide) writeFileSync(join(part, f.name), Bun.zstdDecompressSync(readFileSync(f.path)));
    rmSync(dir, { recursive: true, force: true });
    renameSync(part, dir);
  }
  return (written = dir);
}
