import { parseArgs } from 'node:util';
import { runSandboxChild } from './sandbox-child';

/** A sandbox child run from source (sandbox.ts starts it); the executable runs `parley sandbox` instead. */
const { values } = parseArgs({ args: Bun.argv.slice(2), options: { 'pyodide-dir': { type: 'string' }, limits: { type: 'string' } } });
await runSandboxChild(values['pyodide-dir']!, JSON.parse(values.limits!));
