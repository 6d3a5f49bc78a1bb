import type { Command } from 'commander';
import { runSandboxChild } from '../src/code/sandbox-child';

/**
 * `parley sandbox`: a code interpreter's child process, started by the server (src/code/sandbox.ts)
 * and spoken to on stdin/stdout; hidden, since nobody runs it by hand.
 */
export function sandboxCommand(program: Command) {
  program
    .command('sandbox', { hidden: true })
    .requiredOption('--pyodide-dir <dir>')
    .requiredOption('--limits <json>')
    .action(async (opts: { pyodideDir: string; limits: string }) => {
      await runSandboxChild(opts.pyodideDir, JSON.parse(opts.limits));
    });
}
