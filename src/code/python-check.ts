import type { Config } from '../config';
import type { Check } from '../ops/checks';
import { pyodideDir } from './pyodide-dir';
import { networkIsolation } from './sandbox';

/**
 * `parley doctor` (and the admin page's doctor): whether the code interpreter can run Python here
 * — which directory Pyodide was looked for in and whether its version is the one this build
 * needs — and how isolated its children are.
 */
export function checkPython(config: Config): Check {
  const name = 'code interpreter';
  if (!config.codeInterpreter) return { name, status: 'skip', detail: 'off (PARLEY_CODE_INTERPRETER=false)' };
  const found = pyodideDir(config.pyodideDir);
  if ('missing' in found) return { name, status: 'fail', detail: `${found.missing}: run_python fails until it is there`, fix: found.fix };
  const packages = config.pyodidePackagesDir ? `packages from ${config.pyodidePackagesDir}` : 'standard library only';
  const python = `Python ready (Pyodide ${found.version} in ${found.dir}, ${found.source}; ${packages})`;
  if (!networkIsolation().length)
    return {
      name,
      status: 'warn',
      detail: `${python}; sandboxes run without a network namespace of their own`,
      fix: 'allow unprivileged user namespaces (or install util-linux unshare) so sandboxes get no network (docs/code-interpreter.md, "Isolation")',
    };
  return { name, status: 'ok', detail: `${python}; sandboxes have no network` };
}
