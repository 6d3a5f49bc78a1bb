import { Database } from 'bun:sqlite';
import { chmodSync, chownSync, constants, copyFileSync, existsSync, linkSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { filesDirOf, removeBlobs, restoreBlobs, type RestoredBlobs } from './backup-blobs';
import { DB_FILE } from './connection';
import { verifyDatabaseFile } from './inspect-database';
import { pendingMigrations, unknownMigrations } from './migrate';
import { partialName, removePartial, removeStalePartials, replaceFile } from './partial-file';

export interface Restored {
  file: string;
  /** Where the database it replaced now is (with its -wal/-shm, if it had any left). */
  kept?: string;
  /** Migrations the backup predates: the next `parley serve` (or `parley migrate`) runs them. */
  pending: string[];
  /**
   * The blobs the backup names, put back into `<data dir>/files` from its `.files` (`filesDir`;
   * none for a backup made before files were backed up). Undefined: the files are in a bucket,
   * which a restore leaves alone.
   */
  files?: Omit<RestoredBlobs, 'placed'> & { filesDir?: string };
}

/**
 * Put the backup `source` in place of `<dataDir>/parley.db`: copy it into the data directory
 * (0600, owned like the directory), verify the copy (integrity_check, Parley's tables, no
 * migration newer than this binary), put the blobs it names back into `<dataDir>/files` from its
 * `.files` (those missing there; `files: 's3'` leaves the bucket alone), refuse while another
 * process has the database open, keep the current database under a dated name, and rename the
 * copy into place. Until that rename the data directory is as it was (blobs put back are removed
 * again on a refusal); after it, parley.db is the whole backup.
 */
export async function restoreDatabase(dataDir: string, source: string, now = new Date(), files: 'disk' | 's3' = 'disk'): Promise<Restored> {
  if (!existsSync(source)) throw new Error(`no such file: ${source}`);
  // `parley restore ""` resolves to the working directory: say what is wanted, not copyfile's ENOTSUP.
  if (!statSync(source).isFile()) throw new Error(`${source} is not a file: name a backup file written by \`parley backup\``);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, DB_FILE);
  removeStalePartials(dataDir, 'restore');
  const partial = partialName(file, 'restore');
  try {
    copyFileSync(source, partial, constants.COPYFILE_EXCL);
    chmodSync(partial, 0o600);
    // Run as root (sudo without -u parley): the file must still be the service user's.
    const owner = process.getuid?.() === 0 ? { uid: statSync(dataDir).uid, gid: statSync(dataDir).gid } : undefined;
    if (owner) chownSync(partial, owner.uid, owner.gid);
    const pending = checkBackup(partial, source);
    const blobs = files === 'disk' ? await putBlobsBack(partial, source, dataDir, owner) : undefined;
    try {
      const kept = setAside(file, now);
      replaceFile(partial, file);
      if (!blobs) return { file, kept, pending };
      const { placed: _, ...report } = blobs.report;
      return { file, kept, pending, files: { ...report, filesDir: blobs.filesDir } };
    } catch (err) {
      if (blobs) await removeBlobs(blobs.report.placed);
      throw err;
    }
  } finally {
    removePartial(partial);
  }
}

/**
 * The blobs the checked copy names, from the backup's `.files` into `<dataDir>/files`, before the
 * database is swapped in: a server started on the restored database finds every file it names.
 */
async function putBlobsBack(copy: string, source: string, dataDir: string, owner?: { uid: number; gid: number }) {
  const dir = filesDirOf(source);
  const filesDir = existsSync(dir) && statSync(dir).isDirectory() ? dir : undefined;
  const sqlite = new Database(copy, { readonly: true });
  try {
    return { filesDir, report: await restoreBlobs(sqlite, filesDir, join(dataDir, 'files'), owner) };
  } catch (err) {
    throw new Error(`${source} cannot be restored: its files could not be put back (${(err as Error).message}); nothing was changed`);
  } finally {
    sqlite.close();
  }
}

/** Throws what makes the copy unusable; returns the migrations it still needs. */
function checkBackup(copy: string, source: string): string[] {
  let sqlite: Database | undefined;
  try {
    // A file copied from a stopped server is in WAL mode; rollback mode lets the read-only checks
    // below run without making -wal/-shm files beside the copy. `serve` switches it back.
    sqlite = new Database(copy, { readwrite: true });
    sqlite.exec('PRAGMA journal_mode = DELETE');
    sqlite.close();
    sqlite = undefined;
    const problem = verifyDatabaseFile(copy);
    if (problem) throw new Error(problem);
    sqlite = new Database(copy, { readonly: true });
    const newer = unknownMigrations(sqlite);
    if (newer.length) throw new Error(`it was migrated by a newer Parley (${newer.join(', ')}); restore it with that version`);
    return pendingMigrations(sqlite);
  } catch (err) {
    throw new Error(`${source} cannot be restored: ${(err as Error).message}; nothing was changed`);
  } finally {
    sqlite?.close();
  }
}

/**
 * Keep the current database (if any) as `parley-before-restore-<UTC time>.db`. A process with it
 * open (a server, a backup) would go on writing into the file set aside, so that is refused.
 * Switching to rollback mode is the test, and it folds a crashed server's WAL into the file, so
 * the name set aside holds everything that was committed.
 */
function setAside(file: string, now: Date): string | undefined {
  if (existsSync(file)) {
    let sqlite: Database | undefined;
    try {
      sqlite = new Database(file, { readwrite: true });
      sqlite.exec('PRAGMA busy_timeout = 0');
      sqlite.exec('PRAGMA journal_mode = DELETE');
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY')
        throw new Error(`${file} is in use (a running server or backup): stop Parley first (e.g. sudo systemctl stop parley); nothing was changed`);
      // Not a database at all: nothing can use it; its files are set aside as they are.
    } finally {
      sqlite?.close();
    }
  }
  const suffixes = ['', '-wal', '-shm'].filter((s) => existsSync(file + s));
  if (!suffixes.length) return undefined;
  const kept = join(dirname(file), `parley-before-restore-${now.toISOString().replace(/[-:]|\.\d+/g, '')}.db`);
  if (existsSync(kept)) throw new Error(`${kept} already exists; try again in a second`);
  for (const s of suffixes) {
    if (s !== '') renameSync(file + s, kept + s);
    else {
      // By a second name first, so parley.db stays in place until the copy replaces it; a
      // filesystem without hard links gets a plain rename.
      try {
        linkSync(file, kept);
      } catch {
        renameSync(file, kept);
      }
    }
  }
  return kept;
}
