import { Database } from 'bun:sqlite';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { backupDatabase, backupFile, usedBytes } from '../db/backup';

/**
 * Backups made from the admin API: consistent online copies (src/db/backup.ts) in the data
 * directory's `backups/`, named by the time they were started, of which the newest
 * `KEEP_BACKUPS` stay. `parley backup FILE` writes wherever it is told and prunes nothing.
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
export function createBackupOnce(sqlite: Database, dataDir: string, now: number): Promise<BackupInfo> {
  const current = running.get(sqlite);
  if (current) return current;
  const started = createBackup(sqlite, dataDir, now).finally(() => running.delete(sqlite));
  running.set(sqlite, started);
  return started;
}

/**
 * Back up the live database into `backups/` and remove all but the newest `KEEP_BACKUPS`. A file
 * database is copied by a worker on its own read-only connection, so the server keeps answering
 * while it runs; an in-memory one (tests) can only be copied on its own connection.
 */
export async function createBackup(sqlite: Database, dataDir: string, now: number): Promise<BackupInfo> {
  const dir = backupDirOf(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let ms = now;
  // Two backups started in the same millisecond: the second takes the next free name.
  while (backupPath(dataDir, nameAt(ms))) ms++;
  const name = nameAt(ms);
  const target = join(dir, name);
  const source = sqlite.filename;
  if (source && source !== ':memory:') await backupFile(source, target, usedBytes(sqlite));
  else backupDatabase(sqlite, target);
  for (const old of listBackups(dataDir).slice(KEEP_BACKUPS)) rmSync(join(dir, old.name), { force: true });
  const st = statSync(target);
  return { name, bytes: st.size, createdAt: new Date(st.mtimeMs).toISOString() };
}
