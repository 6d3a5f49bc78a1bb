import type { Command } from 'commander';

/**
 * `parley sandbox`: a code interpreter's child process, started by the server (src/code/sandbox.ts)
 * and spoken to on stdin/stdout; hidden, since nobody runs it by hand. The executable's entry
 * (cli/entry.ts) starts the child without the rest of the CLI; this command is for `bun run
 * cli/main.ts`. Pyodide's glue is loaded when the command runs: every other command (`parley
 * serve` above all) would hold it for nothing (bench/RESULTS.md, "Idle memory").
 */
export function sandboxCommand(program: Command) {
  program
    .command('sandbox', { hidden: true })
    .requiredOption('--pyodide-dir <dir>')
    .requiredOption('--limits <json>')
    .action(async (opts: { pyodideDir: string; limits: string }) => {
      const { runSandboxChild } = await import('../src/code/sandbox-child');
      await runSandboxChild(opts.pyodideDir, JSON.parse(opts.limits));
    });
}
