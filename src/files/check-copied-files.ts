import type { SQL } from 'bun';
import { copyFile, link } from 'node:fs/promises';
import type { BlobStorage } from './blob-storage';
import { blobPathIn, type BlobRef } from '../db/backup-blobs';

/**
 * `parley db copy` copies rows; the bytes of the files stay where the blob storage keeps them
 * (docs/scaling.md, "Files"). After a copy, every blob the copied database names is looked up in
 * the storage the command's settings name, the one the target will be served with, and the ones
 * not there are reported. With `upload`, the ones missing from a bucket are sent to it from the
 * data directory's `files/` first (moving up from one machine to a bucket the instances share).
 */
export interface FilesCheck {
  storage: 'disk' | 's3';
  blobs: number;
  bytes: number;
  /** Sent to the bucket from `<data dir>/files` by this run. */
  uploaded: number;
  missing: number;
  /** The first missing keys. */
  missingKeys: string[];
}

const PAGE = 500;
const AT_ONCE = 8; // lookups in flight: a bucket answers each in a round trip
const SHOWN = 20;

/** The blobs a PostgreSQL database names, a page at a time. */
export async function* pgBlobPages(sql: SQL): AsyncGenerator<BlobRef[]> {
  let after = '';
  for (;;) {
    const rows: { sha256: string; created_at: string | number; size: string | number }[] = await sql`SELECT sha256, created_at, size FROM file_blobs WHERE sha256 > ${after} ORDER BY sha256 LIMIT ${PAGE}`;
    if (!rows.length) return;
    yield rows.map((r) => ({ key: `${r.sha256}-${r.created_at}`, size: Number(r.size) }));
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.sha256;
  }
}

export async function checkCopiedFiles(
  pages: Iterable<BlobRef[]> | AsyncIterable<BlobRef[]>,
  storage: BlobStorage,
  upload?: { fromDir: string },
): Promise<FilesCheck> {
  const check: FilesCheck = { storage: storage.kind, blobs: 0, bytes: 0, uploaded: 0, missing: 0, missingKeys: [] };
  const one = async ({ key }: BlobRef) => {
    // Both kinds of storage hand out a Bun file (disk) or S3 file, which can say whether it exists.
    if (await (storage.get(key) as Blob & { exists(): Promise<boolean> }).exists()) return;
    if (upload && (await uploadBlob(storage, upload.fromDir, key))) {
      check.uploaded++;
      return;
    }
    check.missing++;
    if (check.missingKeys.length < SHOWN) check.missingKeys.push(key);
  };
  for await (const page of pages) {
    for (const blob of page) {
      check.blobs++;
      check.bytes += blob.size;
    }
    for (let i = 0; i < page.length; i += AT_ONCE) await Promise.all(page.slice(i, i + AT_ONCE).map(one));
  }
  check.missingKeys.sort();
  return check;
}

/** One blob from the disk layout into the storage; false when the disk has none either. */
async function uploadBlob(storage: BlobStorage, fromDir: string, key: string): Promise<boolean> {
  const from = blobPathIn(fromDir, key);
  if (!(await Bun.file(from).exists())) return false;
  // `put` takes a temp file and removes it: a second name for the blob (a copy where links fail).
  const temp = await storage.tempPath(`upload-${process.pid}-${key}`);
  await link(from, temp).catch(() => copyFile(from, temp));
  await storage.put(key, temp);
  return true;
}
