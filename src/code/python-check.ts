import type { Config } from '../config';
import type { Check } from '../ops/checks';
import { pyodideDir } from './pyodide-dir';
import { networkIsolation } from './sandbox';

/**
 * `parley doctor` (and the admin page's doctor): whether the code interpreter can run Python (and
 * so JavaScript, built in and run in the same children) here — which directory Pyodide was looked for in and whether its version is the one this build
 * needs — and how isolated its children are. `on` is the admin's switch (Admin → Tools) where the
 * caller knows it (the server's admin/doctor); the command line judges by PARLEY_CODE_INTERPRETER,
 * the switch's default. Off, nothing is broken: a missing Python only warns (an admin could not
 * turn it on).
 */
export function checkPython(config: Config, on = config.codeInterpreter): Check {
  const name = 'code interpreter';
  const state = on ? 'on' : 'off (an admin turns it on in Admin → Tools)';
  const found = pyodideDir(config.pyodideDir);
  if ('missing' in found) return { name, status: on ? 'fail' : 'warn', detail: `${found.missing}: run_python fails until it is there`, fix: found.fix };
  const packages = config.pyodidePackagesDir ? `packages from ${config.pyodidePackagesDir}` : 'standard library only';
  const python = `Python ready (Pyodide ${found.version} in ${found.dir}, ${found.source}; ${packages}), ${state}`;
  if (!networkIsolation().length)
    return {
      name,
      status: on ? 'warn' : 'ok',
      detail: `${python}; JavaScript built in; sandboxes would run without a network namespace of their own`,
      fix: 'allow unprivileged user namespaces (or install util-linux unshare) so sandboxes get no network (docs/code-interpreter.md, "Isolation")',
    };
  return { name, status: 'ok', detail: `${python}; JavaScript built in; sandboxes have no network` };
}
