import type { Config } from '../config';
import type { Check } from '../ops/checks';
import { pyodideDir } from './pyodide-dir';
import { networkIsolation } from './sandbox';

/** `parley doctor`: whether the code interpreter can run Python (and so JavaScript) here, and how isolated its children are. */
export function checkPython(config: Config): Check {
  const name = 'code interpreter';
  if (!config.codeInterpreter) return { name, status: 'skip', detail: 'off (PARLEY_CODE_INTERPRETER=false)' };
  const found = pyodideDir(config.pyodideDir);
  if ('missing' in found) return { name, status: 'fail', detail: found.missing, fix: 'unset PARLEY_PYODIDE_DIR to use the copy built into Parley, or point it at a Pyodide release (docs/code-interpreter.md)' };
  const packages = config.pyodidePackagesDir ? `packages from ${config.pyodidePackagesDir}` : 'standard library only';
  // JavaScript (QuickJS) is built in and runs in the same children: there whenever Python is.
  const ready = `Python ready (${packages}) and JavaScript (built in)`;
  if (!networkIsolation().length)
    return {
      name,
      status: 'warn',
      detail: `${ready}; sandboxes run without a network namespace of their own`,
      fix: 'allow unprivileged user namespaces (or install util-linux unshare) so sandboxes get no network (docs/code-interpreter.md, "Isolation")',
    };
  return { name, status: 'ok', detail: `${ready}; sandboxes have no network` };
}
