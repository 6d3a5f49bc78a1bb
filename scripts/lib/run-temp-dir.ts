/**
 * Point this process's temporary directory at a fresh directory of its own, removed when the
 * process exits. For the commands that make many data directories and binaries (the bench, the
 * fault harness, the test preload): left in the system's temporary directory they add up to
 * gigabytes over a few dozen runs. Processes started from here get it only when spawned with
 * `env: process.env`: otherwise Bun passes the environment as it was at start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function useRunTempDir(prefix: string, opts: { keepOnFailure?: boolean } = {}): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  process.env.TMPDIR = dir;
  const remove = () => rmSync(dir, { recursive: true, force: true });
  process.on('exit', (code) => {
    // A failed run's data directories and server logs are what one needs to see why.
    if (code !== 0 && opts.keepOnFailure) console.error(`kept ${dir} (the run failed)`);
    else remove();
  });
  return { dir, remove };
}
