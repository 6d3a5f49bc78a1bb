import type { Database } from 'bun:sqlite';
import { chmod, chown, copyFile, link, mkdir, open, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The blobs of a backup (docs/self-hosting.md, "Backups"): a backup `X.db` of a server keeping
 * its files on disk has the blobs its snapshot names in `X.files/`, laid out as `<data dir>/files`
 * is (`ab/cd/<sha256>-<time>`, src/files/blob-storage.ts). Blobs are never written in place
 * (a new one is renamed in, a removed one unlinked), so a hard link is a consistent copy that
 * costs no space; across file systems they are copied.
 */
export const filesDirOf = (backupFile: string) => `${backupFile.replace(/\.db$/, '')}.files`;

/** Where blob `key` is under a blob directory (the layout of diskStorage). */
export const blobPathIn = (dir: string, key: string) => join(dir, key.slice(0, 2), key.slice(2, 4), key);

const KEY = /^([0-9a-f]{64})-(\d+)$/;
const PAGE = 1000;

export interface BlobRef {
  key: string;
  size: number;
}

/**
 * The blobs a SQLite database names, a page at a time in key order. A database from before files
 * (an old backup) names none. Each page is its own short read, so a live database's writers are
 * not held up.
 */
export function* blobPagesOf(sqlite: Database): Generator<BlobRef[]> {
  const table = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'file_blobs'").get();
  if (!table) return;
  const next = sqlite.query<{ sha256: string; created_at: number | bigint; size: number | bigint }, [string, number]>(
    'SELECT sha256, created_at, size FROM file_blobs WHERE sha256 > ? ORDER BY sha256 LIMIT ?',
  );
  let after = '';
  for (;;) {
    const rows = next.all(after, PAGE);
    if (!rows.length) return;
    yield rows.map((r) => ({ key: `${r.sha256}-${r.created_at}`, size: Number(r.size) }));
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.sha256;
  }
}

export type Placed = 'linked' | 'copied' | 'present' | 'missing';

// Where hard links cannot be made: another file system (EXDEV), FAT and exFAT (a USB stick),
// some FUSE mounts, a blob of another user under fs.protected_hardlinks (EPERM).
const NO_LINKS = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);

export interface BlobPlacer {
  /** Put the blob at `from` at `to` (absent: `missing`; there already: `present`). */
  place(from: string, to: string): Promise<Placed>;
  /** `link` while every blob went in as a hard link, `copy` once one had to be copied. */
  readonly how: 'link' | 'copy';
  /** fsync the directories blobs went into, so their names survive a power cut. */
  syncDirs(): Promise<void>;
}

/**
 * Places blobs by hard link, or by copy once a link is refused (then for the rest: one failed
 * link per run, not per blob). A copy is written under a temporary name, flushed and renamed, so
 * a blob's name never holds part of its bytes. `owner`: whom new directories and copies belong
 * to (a restore run as root puts them back as the data directory's).
 */
export function blobPlacer(owner?: { uid: number; gid: number }): BlobPlacer {
  let linking = true;
  let copied = false;
  const dirs = new Set<string>();
  const ensureDir = async (dir: string) => {
    if (dirs.has(dir)) return;
    const made = await mkdir(dir, { recursive: true, mode: 0o700 });
    // Every level it made (`made` is the first), owned like the rest when run as root.
    if (made && owner) for (let d = dir; d.length >= made.length; d = dirname(d)) await chown(d, owner.uid, owner.gid);
    dirs.add(dir);
  };
  return {
    get how() {
      return copied ? 'copy' : 'link';
    },
    async place(from, to) {
      await ensureDir(dirname(to));
      if (linking) {
        try {
          await link(from, to);
          if (owner) await chown(to, owner.uid, owner.gid);
          return 'linked';
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? '';
          // No source: gone from storage, unless an earlier step placed it already.
          if (code === 'ENOENT') return (await exists(to)) ? 'present' : 'missing';
          if (code === 'EEXIST') return 'present';
          if (!NO_LINKS.has(code)) throw err;
          linking = false;
        }
      }
      if (await exists(to)) return 'present';
      const partial = `${to}.copy-${process.pid}.partial`;
      try {
        await copyFile(from, partial, constants.COPYFILE_EXCL);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
        throw err;
      }
      try {
        await chmod(partial, 0o600);
        if (owner) await chown(partial, owner.uid, owner.gid);
        await syncFile(partial);
        await rename(partial, to);
      } finally {
        await rm(partial, { force: true });
      }
      copied = true;
      return 'copied';
    },
    async syncDirs() {
      for (const dir of dirs) await syncFile(dir).catch((err) => {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // pruned: empty, gone
      });
    },
  };
}

export interface BlobsReport {
  /** Blobs the snapshot names, and their bytes. */
  blobs: number;
  bytes: number;
  how: 'link' | 'copy';
  /** Blobs the snapshot names whose bytes were not in storage (swept meanwhile, or lost): how many, and the first keys. */
  missing: number;
  missingKeys: string[];
}

const MISSING_SHOWN = 20;

/**
 * First step of a backup's blobs, before the database snapshot is taken: every blob the live
 * database names now goes into `into`. Once linked, a blob is the backup's whatever the sweep does
 * next, so a blob the snapshot names and the sweep removes while the database is copied is in the
 * backup already. (A blob whose object is gone here had its row deleted before the snapshot, since
 * rows go before objects: the snapshot does not name it.)
 */
export async function linkLiveBlobs(live: Database, blobDir: string, into: string, placer: BlobPlacer, signal?: AbortSignal): Promise<void> {
  for (const page of blobPagesOf(live)) {
    for (const { key } of page) {
      if (signal?.aborted) throw new Error('interrupted');
      await placer.place(blobPathIn(blobDir, key), blobPathIn(into, key));
    }
  }
}

/**
 * Second step, on the snapshot itself (a closed SQLite file): the blobs it names that the first
 * step did not link (made between the two) are linked now, and those the first step linked that it
 * does not name (deleted before it) are removed, so `into` holds exactly the snapshot's blobs.
 * A blob uploaded during the first step and swept before this one is the one case left: it is
 * counted in `missing`, and the backup goes on.
 */
export async function completeBlobBackup(snapshot: Database, blobDir: string, into: string, placer: BlobPlacer, signal?: AbortSignal): Promise<BlobsReport> {
  const report: BlobsReport = { blobs: 0, bytes: 0, how: 'link', missing: 0, missingKeys: [] };
  for (const page of blobPagesOf(snapshot)) {
    for (const { key, size } of page) {
      if (signal?.aborted) throw new Error('interrupted');
      report.blobs++;
      report.bytes += size;
      if ((await placer.place(blobPathIn(blobDir, key), blobPathIn(into, key))) === 'missing') noteMissing(report, key);
    }
  }
  // None named (or a database from before files): `into` is not kept at all.
  if (report.blobs) {
    const named = snapshot.query<{ one: number }, [string, number]>('SELECT 1 AS one FROM file_blobs WHERE sha256 = ? AND created_at = ?');
    await pruneBlobs(into, (key) => {
      const m = KEY.exec(key);
      return !!m && !!named.get(m[1]!, Number(m[2]));
    });
  }
  report.how = placer.how;
  return report;
}

function noteMissing(report: { missing: number; missingKeys: string[] }, key: string): void {
  report.missing++;
  if (report.missingKeys.length < MISSING_SHOWN) report.missingKeys.push(key);
}

/** Remove the blobs under `dir` that `keep` refuses, and the directories left empty. */
async function pruneBlobs(dir: string, keep: (key: string) => boolean): Promise<void> {
  for (const a of await readdir(dir).catch(() => [] as string[])) {
    for (const b of await readdir(join(dir, a)).catch(() => [] as string[])) {
      const leaf = join(dir, a, b);
      for (const key of await readdir(leaf)) if (!keep(key)) await unlink(join(leaf, key));
      await rmdir(leaf).catch(() => undefined); // not empty: kept
    }
    await rmdir(join(dir, a)).catch(() => undefined);
  }
}

export interface RestoredBlobs {
  /** Blobs the backup names. */
  blobs: number;
  /** Put back from the backup's `.files` (by link or copy); already in the data directory. */
  restored: number;
  present: number;
  how: 'link' | 'copy';
  missing: number;
  missingKeys: string[];
  /** What this restore added: removed again when the restore fails after all. */
  placed: string[];
}

/**
 * Put the blobs the backup database `backup` names back into `blobDir` from `fromDir` (its
 * `.files`; absent for a backup made before files were backed up, or on S3): the ones already
 * there are left as they are. A blob neither has is `missing`.
 */
export async function restoreBlobs(backup: Database, fromDir: string | undefined, blobDir: string, owner?: { uid: number; gid: number }): Promise<RestoredBlobs> {
  const placer = blobPlacer(owner);
  const out: RestoredBlobs = { blobs: 0, restored: 0, present: 0, how: 'link', missing: 0, missingKeys: [], placed: [] };
  try {
    for (const page of blobPagesOf(backup)) {
      for (const { key } of page) {
        out.blobs++;
        const to = blobPathIn(blobDir, key);
        if (await exists(to)) {
          out.present++;
          continue;
        }
        const placed = fromDir ? await placer.place(blobPathIn(fromDir, key), to) : 'missing';
        if (placed === 'present') out.present++;
        else if (placed === 'missing') noteMissing(out, key);
        else {
          out.restored++;
          out.placed.push(to);
        }
      }
    }
    await placer.syncDirs();
  } catch (err) {
    await removeBlobs(out.placed);
    throw err;
  }
  out.how = placer.how;
  return out;
}

/** Take back what a restore placed, when it fails after all (the data directory as it was). */
export async function removeBlobs(paths: string[]): Promise<void> {
  for (const path of paths) await rm(path, { force: true });
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

async function syncFile(path: string): Promise<void> {
  const fd = await open(path, 'r');
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}
