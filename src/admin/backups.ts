import { Database } from 'bun:sqlite';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { backupConnection, backupFile, usedBytes } from '../db/backup';
import { filesDirOf } from '../db/backup-blobs';

/**
 * Backups made from the admin API: consistent online copies (src/db/backup.ts) in the data
 * directory's `backups/`, named by the time they were started, each with the blobs its snapshot
 * names in `<name>.files/` beside it (files on disk), of which the newest `KEEP_BACKUPS` stay.
 * `parley backup FILE` writes wherever it is told and prunes nothing.
 */
export const BACKUP_DIR = 'backups';
export const KEEP_BACKUPS = 5;

/** `parley-2026-05-01T12-00-00-000Z.db`: the only names a download may ask for, so no path can escape the folder. */
const NAME = /^parley-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.db$/;

export interface BackupInfo {
  name: string;
  bytes: number;
  createdAt: string;
}

export const isBackupName = (name: string) => NAME.test(name);
export const backupDirOf = (dataDir: string) => join(dataDir, BACKUP_DIR);

const nameAt = (ms: number) => `parley-${new Date(ms).toISOString().replace(/[:.]/g, '-')}.db`;

/** The backups in `dataDir`, newest first (their names sort by time). */
export function listBackups(dataDir: string): BackupInfo[] {
  let names: string[];
  try {
    names = readdirSync(backupDirOf(dataDir));
  } catch {
    return [];
  }
  return names
    .filter(isBackupName)
    .sort()
    .reverse()
    .flatMap((name) => {
      try {
        const st = statSync(join(backupDirOf(dataDir), name));
        return [{ name, bytes: st.size, createdAt: new Date(st.mtimeMs).toISOString() }];
      } catch {
        return []; // pruned meanwhile
      }
    });
}

/** The file of backup `name`, or undefined when the name is not a backup's or no such file exists. */
export function backupPath(dataDir: string, name: string): string | undefined {
  if (!isBackupName(name)) return undefined;
  const file = join(backupDirOf(dataDir), name);
  try {
    return statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

// One backup at a time per database: a second click, or two admins at once, share the copy
// being made rather than start more full copies (each is the whole database on an SD card).
const running = new WeakMap<Database, Promise<BackupInfo>>();

/** `createBackup`, or the one already running for this database. */
export function createBackupOnce(sqlite: Database, dataDir: string, now: number, files: 'disk' | 's3' = 'disk'): Promise<BackupInfo> {
  const current = running.get(sqlite);
  if (current) return current;
  const started = createBackup(sqlite, dataDir, now, files).finally(() => running.delete(sqlite));
  running.set(sqlite, started);
  return started;
}

/**
 * Back up the live database into `backups/` and remove all but the newest `KEEP_BACKUPS`, their
 * blobs with them. A file database is copied by a worker on its own read-only connection, so the
 * server keeps answering while it runs; an in-memory one (tests) can only be copied on its own
 * connection. `files`: where the blob storage is; a bucket is not copied (docs/self-hosting.md).
 */
export async function createBackup(sqlite: Database, dataDir: string, now: number, files: 'disk' | 's3' = 'disk'): Promise<BackupInfo> {
  const dir = backupDirOf(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let ms = now;
  // Two backups started in the same millisecond: the second takes the next free name.
  while (backupPath(dataDir, nameAt(ms))) ms++;
  const name = nameAt(ms);
  const target = join(dir, name);
  const source = sqlite.filename;
  const blobDir = files === 'disk' ? join(dataDir, 'files') : undefined;
  if (source && source !== ':memory:') await backupFile(source, target, usedBytes(sqlite), undefined, undefined, blobDir);
  else await backupConnection(sqlite, target, blobDir);
  pruneBackups(dataDir);
  const st = statSync(target);
  return { name, bytes: st.size, createdAt: new Date(st.mtimeMs).toISOString() };
}

/**
 * All but the newest `KEEP_BACKUPS`, each with its `.files`; and a `.files` whose `.db` is gone
 * (a run killed between placing the two, or a `.db` removed by hand).
 */
function pruneBackups(dataDir: string): void {
  const dir = backupDirOf(dataDir);
  for (const old of listBackups(dataDir).slice(KEEP_BACKUPS)) {
    rmSync(join(dir, old.name), { force: true });
    rmSync(join(dir, filesDirOf(old.name)), { recursive: true, force: true });
  }
  for (const name of readdirSync(dir)) {
    const db = name.replace(/\.files$/, '.db');
    if (name.endsWith('.files') && isBackupName(db) && !existsSync(join(dir, db))) rmSync(join(dir, name), { recursive: true, force: true });
  }
}
