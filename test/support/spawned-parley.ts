import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;

/**
 * Parley from source in child processes, with `env` as its settings: its CLI run to the end, a
 * user with an API key made through it, and `parley serve` started (the caller waits for it to
 * listen and kills it).
 */
export function spawnedParley(env: Record<string, string>) {
  const cli = (args: string[]) => Bun.spawnSync([process.execPath, join(root, 'cli/main.ts'), ...args], { env, stdout: 'pipe', stderr: 'pipe' });
  return {
    cli,
    /** `parley user create` and `parley apikey create`: the key. */
    userWithKey(email: string): string {
      if (cli(['user', 'create', '--email', email]).exitCode !== 0) throw new Error(`parley user create ${email} failed`);
      return JSON.parse(cli(['apikey', 'create', '--email', email, '--json']).stdout.toString()).key;
    },
    serve: () => Bun.spawn([process.execPath, join(root, 'cli/main.ts'), 'serve', '--port', '0'], { env, stdout: 'pipe', stderr: 'pipe' }),
  };
}
