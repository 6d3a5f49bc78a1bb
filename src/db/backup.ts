import type { Database } from 'bun:sqlite';
import { existsSync, statSync } from 'node:fs';

/**
 * Write a consistent copy of the live database to `file` with `VACUUM INTO`. It reads one
 * snapshot, so writers keep going while it runs, and the copy is compact and self-contained
 * (no WAL beside it).
 */
export function backupDatabase(sqlite: Database, file: string): void {
  if (existsSync(file)) throw new Error(`${file} already exists; refusing to overwrite it`);
  sqlite.query('VACUUM INTO ?').run(file);
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
 */
export async function backupFile(source: string, target: string, usedBytes: number, onProgress: (fraction: number) => void = () => {}): Promise<void> {
  if (existsSync(target)) throw new Error(`${target} already exists; refusing to overwrite it`);
  const url = URL.createObjectURL(new Blob([WORKER], { type: 'application/javascript' }));
  const worker = new Worker(url);
  const timer = setInterval(() => {
    const size = existsSync(target) ? statSync(target).size : 0;
    onProgress(Math.min(size / Math.max(usedBytes, 1), 0.99));
  }, 100);
  try {
    const result = await new Promise<{ ok: boolean; message?: string }>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
      worker.postMessage({ source, target });
    });
    if (!result.ok) throw new Error(result.message);
    onProgress(1);
  } finally {
    clearInterval(timer);
    worker.terminate();
    URL.revokeObjectURL(url);
  }
}

/** Bytes of `sqlite`'s pages that hold data: the size a VACUUM INTO copy ends up at. */
export function usedBytes(sqlite: Database): number {
  const one = (pragma: string) => Object.values(sqlite.query(`PRAGMA ${pragma}`).get() as object)[0] as number;
  return (one('page_count') - one('freelist_count')) * one('page_size');
}
