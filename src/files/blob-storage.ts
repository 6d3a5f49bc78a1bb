import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { S3Client } from 'bun';
import type { Config } from '../config';

/**
 * Where file contents live, named by their SHA-256 (docs/files.md, "Storage"): a directory under
 * the data directory, or an S3-compatible bucket (Bun's built-in client) when several instances
 * share no disk. The database says which blobs exist; this only holds their bytes.
 */
export interface BlobStorage {
  readonly kind: 'disk' | 's3';
  /** A fresh path for an upload in progress, on the same file system as the blobs (a rename moves it in). */
  tempPath(name: string): Promise<string>;
  /** Move a finished temp file in under its hash; the temp file is gone afterwards either way. */
  put(sha256: string, tempFile: string): Promise<void>;
  /** The bytes, as a Blob that reads lazily (`slice` for a range, `stream()` to send). */
  get(sha256: string): Blob;
  /** Gone, or never there: both fine (the sweep may run twice). */
  remove(sha256: string): Promise<void>;
}

export function createBlobStorage(config: Config): BlobStorage {
  return config.filesS3Bucket ? s3Storage(config) : diskStorage(join(config.dataDir, 'files'));
}

/** `<dir>/ab/cd/<sha256>`: two levels keep directories small with a million files. */
export function diskStorage(dir: string): BlobStorage {
  const pathOf = (sha: string) => join(dir, sha.slice(0, 2), sha.slice(2, 4), sha);
  const tmpDir = join(dir, 'tmp');
  return {
    kind: 'disk',
    async tempPath(name) {
      await mkdir(tmpDir, { recursive: true, mode: 0o700 });
      return join(tmpDir, name);
    },
    async put(sha, tempFile) {
      const target = pathOf(sha);
      await mkdir(join(target, '..'), { recursive: true, mode: 0o700 });
      // Same bytes already there (another upload of them, or a sweep that lost a race): keep one.
      if (await exists(target)) await rm(tempFile, { force: true });
      else await rename(tempFile, target);
    },
    get: (sha) => Bun.file(pathOf(sha)),
    remove: (sha) => rm(pathOf(sha), { force: true }),
  };
}

/**
 * The client's options, the endpoint and region always spelled out: Bun's client takes what is
 * left empty from S3_ENDPOINT, AWS_REGION and the like of the process's environment, so a
 * variable meant for another program would send the files (and sign them for) somewhere the
 * settings do not say. Empty keys still fall back to AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY (docs/files.md, "Storage").
 */
export function s3ClientOptions(config: Config) {
  const region = config.filesS3Region || (config.filesS3Endpoint ? 'auto' : 'us-east-1');
  return {
    bucket: config.filesS3Bucket,
    endpoint: config.filesS3Endpoint || `https://s3.${region}.amazonaws.com`,
    region,
    accessKeyId: config.filesS3AccessKeyId,
    secretAccessKey: config.filesS3SecretAccessKey,
  };
}

function s3Storage(config: Config): BlobStorage {
  const client = new S3Client(s3ClientOptions(config));
  const key = (sha: string) => `${config.filesS3Prefix}${sha}`;
  // Uploads are received on local disk first (hashed and sniffed), then sent to the bucket.
  const local = diskStorage(join(config.dataDir, 'files'));
  return {
    kind: 's3',
    tempPath: local.tempPath,
    async put(sha, tempFile) {
      try {
        await client.write(key(sha), Bun.file(tempFile));
      } finally {
        await rm(tempFile, { force: true });
      }
    },
    get: (sha) => client.file(key(sha)),
    remove: async (sha) => {
      // S3 answers 204 for a key that is not there; some compatible stores answer 404.
      await client.delete(key(sha)).catch((err: { code?: string }) => {
        if (err?.code !== 'NoSuchKey') throw err;
      });
    },
  };
}

const exists = (path: string) => stat(path).then(
  () => true,
  () => false,
);
