/**
 * What the bench needs besides Parley's own install: its npm packages (sharp, autocannon) in
 * bench/node_modules from bench/package-lock.json, and a load generator (wrk, else autocannon).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadTool } from './load';

const has = (cmd: string) => Bun.which(cmd) !== null;

/** `npm ci` in bench/ when bench/node_modules does not match the lockfile (like install.sh). */
export function ensureBenchPackages(benchDir: string, log: (m: string) => void): void {
  const stamp = join(benchDir, 'node_modules', '.parley-bench-lock');
  const want = createHash('sha256').update(readFileSync(join(benchDir, 'package-lock.json'))).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === want) return;
  if (!has('npm')) {
    log('npm not found: sharp and autocannon unavailable (the sharp comparison is skipped)');
    return;
  }
  log('installing the bench packages (npm ci in bench/)');
  const r = Bun.spawnSync(['npm', 'ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: benchDir, stdout: 'inherit', stderr: 'inherit' });
  if (r.exitCode === 0) writeFileSync(stamp, want);
  else log('npm ci failed in bench/: sharp and autocannon unavailable');
}

/** wrk when installed (or installable: Debian, as root), else autocannon. */
export function chooseLoadTool(benchDir: string, wanted: string | undefined, log: (m: string) => void): LoadTool {
  const autocannon = existsSync(join(benchDir, 'node_modules', 'autocannon', 'autocannon.js')) && has('node');
  if (wanted === 'autocannon') {
    if (!autocannon) throw new Error('autocannon is not installed in bench/node_modules');
    return 'autocannon';
  }
  if (!has('wrk') && process.getuid?.() === 0 && has('apt-get')) {
    log('installing wrk (apt-get)');
    Bun.spawnSync(['apt-get', 'install', '-y', '-qq', 'wrk'], { stdout: 'ignore', stderr: 'ignore' });
    if (!has('wrk')) {
      Bun.spawnSync(['apt-get', 'update', '-qq'], { stdout: 'ignore', stderr: 'ignore' });
      Bun.spawnSync(['apt-get', 'install', '-y', '-qq', 'wrk'], { stdout: 'ignore', stderr: 'ignore' });
    }
  }
  if (has('wrk')) return 'wrk';
  if (wanted === 'wrk') throw new Error('wrk is not installed and could not be installed');
  if (autocannon) {
    log('wrk not available: using autocannon');
    return 'autocannon';
  }
  throw new Error('no load generator: install wrk (apt-get install wrk) or run npm ci in bench/');
}
