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

export async function startPostgres(): Promise<TestPostgres> {
  if (!PG_BIN) throw new Error('no PostgreSQL server installed');
  const asRoot = process.getuid?.() === 0;
  // Under root the server's user must reach the directory: the test run's own temp dir is
  // private to root, so the system's shared one (sticky, traversable) holds the cluster.
  const dir = mkdtempSync(join(asRoot ? '/tmp' : tmpdir(), 'parley-pg-'));
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
      '-o', `-h 127.0.0.1 -p ${port} -k ${dir} -F -c max_connections=50`, 'start',
    ]),
  );
  return {
    url: `postgres://parley@127.0.0.1:${port}/postgres`,
    async stop() {
      Bun.spawnSync(as([join(PG_BIN!, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']), { stdout: 'ignore', stderr: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function run(cmd: string[]): void {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
}

