import { closeSync, existsSync, fsyncSync, linkSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Files Parley writes whole (a backup, a new database, a restored one) are written under a
 * temporary name beside the final one and renamed into place, so the final name only ever holds a
 * complete file. The temporary name says what it is and which process writes it:
 * `<final>.<kind>-<pid>.partial`. A process killed half-way (SIGKILL, the OOM killer, power loss)
 * leaves only such a file, which the next run of the same kind in that directory removes.
 */
export function partialName(file: string, kind: string): string {
  return `${file}.${kind}-${process.pid}.partial`;
}

/**
 * Remove `*.<kind>-<pid>.partial` files (and their `-journal`) in `dir` whose process is gone. A file whose process
 * still runs (another backup right now) is left alone; a pid reused since the kill leaves its
 * file for a later run.
 */
export function removeStalePartials(dir: string, kind: string): string[] {
  // SQLite may have made a rollback journal beside it (VACUUM INTO an existing file does).
  const pattern = new RegExp(`\\.${kind}-(\\d+)\\.partial(-journal)?$`);
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const pid = Number(pattern.exec(name)?.[1]);
    if (!pid || pid === process.pid || isRunning(pid)) continue;
    // A directory too: a backup's blobs are gathered in `<name>.files.backup-<pid>.partial/`.
    rmSync(join(dir, name), { force: true, recursive: true });
    removed.push(name);
  }
  return removed;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Remove an unfinished `partial` and the rollback journal SQLite may have left beside it. */
export function removePartial(partial: string): void {
  rmSync(partial, { force: true });
  rmSync(`${partial}-journal`, { force: true });
}

/** fsync a file or a directory (a directory's entry list: what a rename changed). */
export function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

// Filesystems without hard links (FAT and exFAT, e.g. a USB stick for backups, some FUSE mounts).
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);

/**
 * Move the complete file `partial` to `file`, which must not exist (EEXIST otherwise): its data
 * reaches the disk first, then the name, so after a power loss `file` is either absent or whole.
 * A hard link is the atomic "create only if absent"; where links do not exist, a rename after a
 * last look.
 */
export function placeNewFile(partial: string, file: string): void {
  syncPath(partial);
  try {
    linkSync(partial, file);
    rmSync(partial);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (!NO_LINKS.has(code)) throw err;
    if (existsSync(file)) throw Object.assign(new Error(`${file} already exists`), { code: 'EEXIST' });
    renameSync(partial, file);
  }
  syncPath(dirname(file));
}

/** Replace `file` (present or not) with the complete file `partial`, in one rename. */
export function replaceFile(partial: string, file: string): void {
  syncPath(partial);
  renameSync(partial, file);
  syncPath(dirname(file));
}

