#!/usr/bin/env bun
/**
 * The executable's entry (scripts/build.ts). A code interpreter's child (`parley sandbox`, started
 * by the server: src/code/sandbox.ts) loads the sandbox alone, not every command and the whole
 * app: ~40 MB less in each child (bench/RESULTS.md, "Code interpreter"). Everything else is
 * cli/main.ts.
 */
import { parseArgs } from 'node:util';

if (process.argv[2] === 'sandbox') {
  const { values } = parseArgs({ args: process.argv.slice(3), options: { 'pyodide-dir': { type: 'string' }, limits: { type: 'string' } } });
  const { runSandboxChild } = await import('../src/code/sandbox-child');
  await runSandboxChild(values['pyodide-dir']!, JSON.parse(values.limits!));
} else {
  await import('./main');
}
