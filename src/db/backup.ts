import { Database } from 'bun:sqlite';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { blobPlacer, completeBlobBackup, filesDirOf, linkLiveBlobs, type BlobPlacer, type BlobsReport } from './backup-blobs';
import { verifyDatabaseFile } from './inspect-database';
import { partialName, placeNewFile, removePartial, removeStalePartials, syncPath } from './partial-file';

/**
 * Write a consistent copy of the live database to `file` with `VACUUM INTO`. It reads one
 * snapshot, so writers keep going while it runs, and the copy is compact and self-contained
 * (no WAL beside it). The database alone: `backupWithFiles` adds the blobs.
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

export interface BackupResult {
  file: string;
  /** The blobs beside it in `filesDir` (none made when the snapshot names no blob); undefined: not backed up (S3). */
  files?: BlobsReport & { filesDir?: string };
}

/**
 * A backup of the database and the blobs its snapshot names (src/db/backup-blobs.ts), with
 * both under temporary names until both are complete: the `.files` directory is renamed into
 * place first, the `.db` last, so a backup's `.db` never appears without its files. `blobDir`:
 * the live `<data dir>/files`; none (files in a bucket) copies the database alone.
 */
async function backupWithFiles(
  target: string,
  copy: (partial: string) => void | Promise<void>,
  opts: { blobDir?: string; openLive: () => { db: Database; close(): void }; signal?: AbortSignal },
): Promise<BackupResult> {
  const partial = startBackup(target);
  const blobs = opts.blobDir ? { dir: partialName(filesDirOf(target), 'backup'), placer: blobPlacer() } : undefined;
  try {
    if (blobs) {
      mkdirSync(blobs.dir, { mode: 0o700 });
      const live = opts.openLive();
      try {
        await linkLiveBlobs(live.db, opts.blobDir!, blobs.dir, blobs.placer, opts.signal);
      } finally {
        live.close();
      }
    }
    await copy(partial);
    checkCopy(partial, target);
    if (!blobs) {
      placeNewFile(partial, target);
      return { file: target };
    }
    const snapshot = new Database(partial, { readonly: true });
    let report: BlobsReport;
    try {
      report = await completeBlobBackup(snapshot, opts.blobDir!, blobs.dir, blobs.placer, opts.signal);
    } finally {
      snapshot.close();
    }
    const filesDir = report.blobs ? await placeBlobDir(blobs.dir, blobs.placer, target) : undefined;
    try {
      placeNewFile(partial, target);
    } catch (err) {
      if (filesDir) rmSync(filesDir, { recursive: true, force: true });
      throw err;
    }
    return { file: target, files: { ...report, filesDir } };
  } catch (err) {
    if (opts.signal?.aborted) throw new Error(`interrupted; nothing was written to ${target}`);
    throw err;
  } finally {
    removePartial(partial);
    if (blobs) rmSync(blobs.dir, { recursive: true, force: true });
  }
}

/** The complete blob directory under its final name, its entries on disk first. */
async function placeBlobDir(partialDir: string, placer: BlobPlacer, target: string): Promise<string> {
  const final = filesDirOf(target);
  await placer.syncDirs();
  syncPath(partialDir);
  if (existsSync(final)) throw new Error(`${final} already exists; refusing to overwrite it`);
  renameSync(partialDir, final);
  syncPath(dirname(final));
  return final;
}

/**
 * `backupDatabase` with the blobs, on the caller's own connection: a database in memory (tests),
 * which a second connection cannot see.
 */
export function backupConnection(sqlite: Database, file: string, blobDir?: string): Promise<BackupResult> {
  return backupWithFiles(file, (partial) => void sqlite.query('VACUUM INTO ?').run(partial), { blobDir, openLive: () => ({ db: sqlite, close() {} }) });
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
  if (existsSync(filesDirOf(target))) throw new Error(`${filesDirOf(target)} already exists; refusing to overwrite it`);
  removeStalePartials(dirname(target), 'backup');
  const partial = partialName(target, 'backup');
  closeSync(openSync(partial, 'wx', 0o600));
  return partial;
}

/** quick_check and Parley's tables, then the rename: the final name only ever holds a copy that passed. */
function finishBackup(partial: string, target: string): void {
  checkCopy(partial, target);
  placeNewFile(partial, target);
}

function checkCopy(partial: string, target: string): void {
  const problem = verifyDatabaseFile(partial, 'quick_check');
  if (problem) throw new Error(`the copy failed its check (${problem}); nothing was written to ${target}`);
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
 * Back up the database file `source` to `target` like `backupDatabase`, and the blobs its
 * snapshot names from `blobDir` (the live `<data dir>/files`; none: the database alone), calling
 * `onProgress` with a fraction in [0, 1]: the copy's size against the source's used pages (VACUUM
 * INTO leaves free pages out, so that is what the copy grows to). It ends with exactly one call
 * with 1. When `signal` aborts (Ctrl-C), it stops and removes the unfinished copy.
 */
export async function backupFile(
  source: string,
  target: string,
  usedBytes: number,
  onProgress: (fraction: number) => void = () => {},
  signal?: AbortSignal,
  blobDir?: string,
): Promise<BackupResult> {
  const openLive = () => {
    const db = new Database(source, { readonly: true });
    return { db, close: () => db.close() };
  };
  const result = await backupWithFiles(target, (partial) => vacuumInWorker(source, partial, target, usedBytes, onProgress, signal), { blobDir, openLive, signal });
  onProgress(1);
  return result;
}

async function vacuumInWorker(source: string, partial: string, target: string, usedBytes: number, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<void> {
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
