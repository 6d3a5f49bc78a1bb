import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { version as PYODIDE_VERSION } from 'pyodide/package.json';

export { PYODIDE_VERSION };

/** The files Pyodide loads from its directory (the npm package's core and standard library). */
export const PYODIDE_FILES = ['pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'] as const;

/** Pyodide's directory and how it was chosen, for doctor and the tool's error. */
export interface PyodideLookup {
  dir: string;
  /** Why this directory: the setting, beside the executable, or the npm package (from source). */
  source: string;
}

/** The directory with Pyodide's files, or why none is usable here (`missing`, with how to fix it). */
export type PyodideFound = (PyodideLookup & { version: string }) | (PyodideLookup & { missing: string; fix: string });

/**
 * Where Pyodide's files are: `PARLEY_PYODIDE_DIR` when set; else, in the executable, the `pyodide`
 * directory beside it (install.sh and the release tarballs put it there: Pyodide is 5.4 MB of the
 * binary's share compressed, so it is not embedded); from source, the npm package's directory.
 * The directory must hold the Pyodide version this build's loader was built with: loading another
 * fails deep inside Pyodide, so a stale directory left by an upgrade is named here instead.
 */
export function pyodideDir(configured: string | undefined): PyodideFound {
  const where = lookup(configured);
  const gone = PYODIDE_FILES.filter((f) => !existsSync(join(where.dir, f)));
  if (gone.length) {
    const missing = gone.length === PYODIDE_FILES.length ? `Pyodide is not installed in ${where.dir} (${where.source})` : `Pyodide in ${where.dir} (${where.source}) lacks ${gone.join(', ')}`;
    return { ...where, missing, fix: fixFor(configured) };
  }
  const version = versionIn(where.dir);
  if (version !== PYODIDE_VERSION)
    return { ...where, missing: `${where.dir} (${where.source}) holds Pyodide ${version ?? 'of an unknown version'}; this Parley needs ${PYODIDE_VERSION}`, fix: fixFor(configured) };
  return { ...where, version };
}

function lookup(configured: string | undefined): PyodideLookup {
  if (configured) return { dir: configured, source: 'PARLEY_PYODIDE_DIR' };
  if (compiled()) return { dir: join(dirname(process.execPath), 'pyodide'), source: 'beside the executable' };
  try {
    return { dir: dirname(Bun.resolveSync('pyodide/package.json', import.meta.dir)), source: 'the npm package' };
  } catch {
    return { dir: join(process.cwd(), 'node_modules', 'pyodide'), source: 'the npm package' };
  }
}

const compiled = () => import.meta.path.startsWith('/$bunfs/') || import.meta.path.startsWith('B:/~BUN/');

function fixFor(configured: string | undefined): string {
  const release = `copy the pyodide directory of Parley's release (or dist/pyodide of a build) beside the parley executable`;
  return configured
    ? `point PARLEY_PYODIDE_DIR at Pyodide ${PYODIDE_VERSION}'s files, or unset it and ${release} (docs/code-interpreter.md)`
    : `run install.sh again, which installs Pyodide beside the binary, or ${release}, or set PARLEY_PYODIDE_DIR (docs/code-interpreter.md)`;
}

/** The version in a directory's pyodide.asm.mjs (the one Pyodide's loader compares), read once per file version. */
function versionIn(dir: string): string | undefined {
  const file = join(dir, 'pyodide.asm.mjs');
  const { mtimeMs, size } = statSync(file);
  const key = `${file}:${mtimeMs}:${size}`;
  if (versions.has(key)) return versions.get(key);
  const version = /API\.version\s*=\s*"([^"]+)"/.exec(readFileSync(file, 'latin1'))?.[1];
  versions.set(key, version);
  return version;
}
const versions = new Map<string, string | undefined>();
