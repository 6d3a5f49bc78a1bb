import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

/**
 * A throwaway PostgreSQL server for tests: Debian's PostgreSQL (15 or later) started on a
 * temporary directory, on 127.0.0.1 only, as a user that is not root (the server refuses root:
 * under root the cluster runs as `postgres`, the user Debian's package makes). No fsync: a test's
 * data need not survive a power cut. `stop` ends it and removes the directory.
 *
 * `binDir` is undefined where no server is installed (apt-get install postgresql); tests then
 * skip, except under CI (`CI=true`), where .ci/run installs it and a missing server is a failure.
 */
export const PG_BIN = process.env.PARLEY_PG_BIN ?? newestServer();

function newestServer(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .map(Number)
    .filter((v) => v >= 15 && existsSync(join(root, String(v), 'bin', 'postgres')))
    .sort((a, b) => b - a);
  return versions.length ? join(root, String(versions[0]), 'bin') : undefined;
}

/** Whether PostgreSQL tests run here; under CI they must. */
export function postgresAvailable(): boolean {
  if (PG_BIN) return true;
  if (process.env.CI === 'true') throw new Error('PostgreSQL 15+ is not installed: .ci/run installs Debian\'s postgresql');
  console.warn('PostgreSQL tests skipped: no server under /usr/lib/postgresql (apt-get install postgresql, or set PARLEY_PG_BIN)');
  return false;
}

export interface TestPostgres {
  /** `postgres://parley@127.0.0.1:<port>/postgres` (trust authentication: loopback, a test's own cluster). */
  url: string;
  stop(): Promise<void>;
}

export async function startPostgres(
  opts: {
    /** The server's `max_connections` (50 by default: a test's own few pools). */
    maxConnections?: number;
    /**
     * Stop the server once this process has gone, however it went: a watchdog shell polls it.
     * For a server that outlives one test file (test/support/test-database.ts), whose process may
     * end without running its hooks (killed, interrupted, `--bail`).
     */
    stopWhenGone?: number;
    /** Where the cluster's directory goes (a memory file system makes `CREATE DATABASE` ten times faster). */
    parentDir?: string;
  } = {},
): Promise<TestPostgres> {
  if (!PG_BIN) throw new Error('no PostgreSQL server installed');
  const asRoot = process.getuid?.() === 0;
  // Under root the server's user must reach the directory: the test run's own temp dir is
  // private to root, so the system's shared one (sticky, traversable) holds the cluster.
  const dir = mkdtempSync(join(opts.parentDir ?? (asRoot ? '/tmp' : tmpdir()), 'parley-pg-'));
  // The cluster's files belong to the user that runs it; the socket goes in the same directory.
  if (asRoot) {
    chmodSync(dir, 0o700);
    run(['chown', 'postgres:postgres', dir]);
  }
  const as = (args: string[]) => (asRoot ? ['runuser', '-u', 'postgres', '--', ...args] : args);
  run(as([join(PG_BIN, 'initdb'), '-D', join(dir, 'data'), '-U', 'parley', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']));
  const port = await freePort();
  run(
    as([
      join(PG_BIN, 'pg_ctl'), '-D', join(dir, 'data'), '-l', join(dir, 'server.log'), '-w', '-t', '60',
      '-o', `-h 127.0.0.1 -p ${port} -k ${dir} -F -c max_connections=${opts.maxConnections ?? 50}`, 'start',
    ]),
  );
  const stopCommand = as([join(PG_BIN, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  if (opts.stopWhenGone) {
    const quoted = stopCommand.map((a) => `'${a}'`).join(' ');
    const script = `while kill -0 ${opts.stopWhenGone} 2>/dev/null; do sleep 1; done; ${quoted} >/dev/null 2>&1; rm -rf '${dir}'`;
    Bun.spawn(['sh', '-c', script], { stdio: ['ignore', 'ignore', 'ignore'] }).unref();
  }
  return {
    url: `postgres://parley@127.0.0.1:${port}/postgres`,
    async stop() {
      Bun.spawnSync(stopCommand, { stdout: 'ignore', stderr: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function run(cmd: string[]): void {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
}

