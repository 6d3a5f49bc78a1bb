import type { Database } from 'bun:sqlite';
import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { verifyDatabaseFile } from './inspect-database';
import { partialName, placeNewFile, removePartial, removeStalePartials } from './partial-file';

/**
 * Write a consistent copy of the live database to `file` with `VACUUM INTO`. It reads one
 * snapshot, so writers keep going while it runs, and the copy is compact and self-contained
 * (no WAL beside it).
 */
export function backupDatabase(sqlite: Database, file: string): void {
  const partial = startBackup(file);
  try {
    sqlite.query('VACUUM INTO ?').run(partial);
    finishBackup(partial, file);
  } finally {
    removePartial(partial);
  }
}

/**
 * The copy is written under a temporary name beside `target` and renamed into place only once
 * complete, checked and on disk: a backup killed half-way (a timer's run cut short, the OOM
 * killer, power loss) must not leave a file under the final name, where an empty or table-less
 * copy looked fine to SQLite and restored as an empty database. Returns the temporary file,
 * created empty with mode 0600 (VACUUM INTO fills an empty file; made first, the copy is
 * private whatever the umask) after removing what killed runs left in that directory.
 */
function startBackup(target: string): string {
  if (existsSync(target)) throw new Error(`${target} already exists; refusing to overwrite it`);
  removeStalePartials(dirname(target), 'backup');
  const partial = partialName(target, 'backup');
  closeSync(openSync(partial, 'wx', 0o600));
  return partial;
}

/** quick_check and Parley's tables, then the rename: the final name only ever holds a copy that passed. */
function finishBackup(partial: string, target: string): void {
  const problem = verifyDatabaseFile(partial, 'quick_check');
  if (problem) throw new Error(`the copy failed its check (${problem}); nothing was written to ${target}`);
  placeNewFile(partial, target);
}

// VACUUM INTO is one synchronous call with no progress hook, so it runs in a worker on its own
// read-only connection (read-only: a backup run as root must not leave root-owned WAL files
// beside a service running as another user) while this thread watches the copy grow.
const WORKER = `
import { Database } from 'bun:sqlite';
self.onmessage = ({ data }) => {
  let db;
  try {
    db = new Database(data.source, { readonly: true });
    db.query('VACUUM INTO ?').run(data.target);
    postMessage({ ok: true });
  } catch (err) {
    postMessage({ ok: false, message: String(err && err.message || err) });
  } finally {
    db?.close();
  }
};`;

/**
 * Back up the database file `source` to `target` like `backupDatabase`, calling `onProgress`
 * with a fraction in [0, 1]: the copy's size against the source's used pages (VACUUM INTO leaves
 * free pages out, so that is what the copy grows to). It ends with exactly one call with 1.
 * When `signal` aborts (Ctrl-C), it stops and removes the unfinished copy.
 */
export async function backupFile(
  source: string,
  target: string,
  usedBytes: number,
  onProgress: (fraction: number) => void = () => {},
  signal?: AbortSignal,
): Promise<void> {
  const partial = startBackup(target);
  const url = URL.createObjectURL(new Blob([WORKER], { type: 'application/javascript' }));
  const worker = new Worker(url);
  const timer = setInterval(() => {
    const size = existsSync(partial) ? statSync(partial).size : 0;
    onProgress(Math.min(size / Math.max(usedBytes, 1), 0.99));
  }, 100);
  try {
    const result = await new Promise<{ ok: boolean; message?: string }>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
      const interrupted = () => reject(new Error(`interrupted; nothing was written to ${target}`));
      if (signal?.aborted) interrupted();
      signal?.addEventListener('abort', interrupted, { once: true });
      worker.postMessage({ source, target: partial });
    });
    if (!result.ok) throw new Error(result.message);
    finishBackup(partial, target);
    onProgress(1);
  } finally {
    clearInterval(timer);
    worker.terminate();
    URL.revokeObjectURL(url);
    removePartial(partial);
  }
}

/** Bytes of `sqlite`'s pages that hold data: the size a VACUUM INTO copy ends up at. */
export function usedBytes(sqlite: Database): number {
  const one = (pragma: string) => Object.values(sqlite.query(`PRAGMA ${pragma}`).get() as object)[0] as number;
  return (one('page_count') - one('freelist_count')) * one('page_size');
}
