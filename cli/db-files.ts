import type { Command } from 'commander';
import { Database } from 'bun:sqlite';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../src/config';
import { DB_FILE } from '../src/db/connection';
import { checkCopiedFiles, pgBlobPages, type FilesCheck } from '../src/files/check-copied-files';
import { connectPg } from '../src/db/pg/connect';
import { maskUrl } from '../src/mask-secrets';
import type { BackupResult } from '../src/db/backup';
import type { Restored } from '../src/db/restore';
import { blobPagesOf } from '../src/db/backup-blobs';
import { createBlobStorage } from '../src/files/blob-storage';
import { cliConfig, common, output, runAction, CliError, type CommonOptions } from './context';

// What the backup, restore and db copy commands say about the files (docs/self-hosting.md,
// "Backups"; docs/scaling.md, "Files"), and `parley db check-files`.

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const firstKeys = (keys: string[], all: number) => `${keys.slice(0, 3).join(', ')}${all > 3 ? ', …' : ''}`;
const bucketOf = (config: Config) => `the bucket ${config.filesS3Bucket}${config.filesS3Prefix ? ` (${config.filesS3Prefix}…)` : ''}`;
export const blobDirOf = (config: Config) => join(config.dataDir, 'files');
export const whereFiles = (config: Config) => (config.filesS3Bucket ? bucketOf(config) : blobDirOf(config));

export function backupFilesLines(config: Config, files: BackupResult['files']): string[] {
  if (!files) return [`files: not in this backup; they are in ${bucketOf(config)}: back it up with the store's own tools (versioning, replication) (docs/self-hosting.md)`];
  const lines: string[] = [];
  if (files.filesDir) lines.push(`files: ${files.blobs} stored file(s), ${mb(files.bytes)}, in ${files.filesDir} (${files.how === 'link' ? 'hard links: no extra space' : 'copied: another file system'})`);
  if (files.missing)
    lines.push(
      `warning: ${files.missing} stored file(s) the backup names were not in ${blobDirOf(config)} (deleted and swept while the backup ran, or lost): they will not download after a restore (${firstKeys(files.missingKeys, files.missing)})`,
    );
  return lines;
}

export function restoreFilesLines(config: Config, files: Restored['files']): string[] {
  if (!files) return [`files: left as they are in ${bucketOf(config)}; restore the bucket with the store's own tools if it must go back too`];
  const lines: string[] = [];
  if (files.restored) lines.push(`files: ${files.restored} stored file(s) put back into ${blobDirOf(config)} from ${files.filesDir} (${files.how === 'link' ? 'hard links' : 'copied'}), ${files.present} there already`);
  else if (files.blobs) lines.push(`files: all ${files.blobs} stored file(s) the backup names are in ${blobDirOf(config)} already`);
  if (files.missing)
    lines.push(
      `warning: ${files.missing} stored file(s) the backup names are neither ${files.filesDir ? `in ${files.filesDir}` : 'beside it (no .files directory: a backup from before files were backed up)'} nor in ${blobDirOf(config)}: they will not download (${firstKeys(files.missingKeys, files.missing)})`,
    );
  return lines;
}

/** The lines `db copy` ends with: where the files are for the target, and what is missing there. */
export function copyFilesLines(config: Config, check: FilesCheck, direction: 'to' | 'from'): string[] {
  const where = whereFiles(config);
  const lines =
    check.missing === 0
      ? [`files: the ${check.blobs} stored file(s) the database names are all in ${where}${check.blobs ? '' : ' (none)'}`]
      : [`warning: ${check.missing} of ${check.blobs} stored file(s) the database names are not in ${where} (${firstKeys(check.missingKeys, check.missing)})`];
  if (direction === 'to' && check.storage === 'disk')
    lines.push(
      `the files stay in ${where}: a server with another data directory or on another machine does not see them; for several instances keep them in a bucket (PARLEY_FILES_S3_*) and send them there with \`parley db check-files --upload\` (docs/scaling.md)`,
    );
  else if (direction === 'to' && check.missing) lines.push(`send them from ${blobDirOf(config)} with \`parley db check-files --upload\`, with PARLEY_DATABASE_URL and PARLEY_FILES_S3_* set (docs/scaling.md)`);
  else if (direction === 'from' && check.missing)
    lines.push(`they are where the PostgreSQL instances kept them: serve from the bucket (keep PARLEY_FILES_S3_* set), or copy them into ${blobDirOf(config)} (docs/scaling.md)`);
  return lines;
}

/** The blobs of the configured database looked up in the configured storage, the missing ones uploaded with `upload`. */
async function checkConfigured(config: Config, upload: boolean): Promise<FilesCheck> {
  const storage = createBlobStorage(config);
  const from = upload ? { fromDir: blobDirOf(config) } : undefined;
  if (config.databaseUrl) {
    let sql;
    try {
      sql = connectPg(config.databaseUrl);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
    try {
      return await checkCopiedFiles(pgBlobPages(sql), storage, from);
    } catch (err) {
      throw new CliError(`${maskUrl(config.databaseUrl)}: ${(err as Error).message}`);
    } finally {
      await sql.close();
    }
  }
  const file = join(config.dataDir, DB_FILE);
  if (!existsSync(file)) throw new CliError(`no database at ${file}`);
  const sqlite = new Database(file, { readonly: true });
  try {
    return await checkCopiedFiles(blobPagesOf(sqlite), storage, from);
  } finally {
    sqlite.close();
  }
}

export function checkFilesCommand(db: Command) {
  common(db.command('check-files'))
    .description('look up every stored file the database names in the blob storage (data directory or bucket); --upload sends the missing ones from the data directory to the bucket')
    .option('--upload', "send the files missing from the bucket (PARLEY_FILES_S3_*) from the data directory's files/ (moving from one machine to several)")
    .action(
      runAction(async (opts: CommonOptions & { upload?: boolean }) => {
        const config = cliConfig(opts);
        if (opts.upload && !config.filesS3Bucket) throw new CliError(`--upload sends files to the bucket of PARLEY_FILES_S3_BUCKET, which is not set: the files are in ${blobDirOf(config)} already`);
        const check = await checkConfigured(config, !!opts.upload);
        const where = whereFiles(config);
        const lines = [
          check.uploaded ? `uploaded ${check.uploaded} stored file(s) from ${blobDirOf(config)} to ${where}` : '',
          check.missing
            ? `${check.missing} of ${check.blobs} stored file(s) the database names are not in ${where} (${firstKeys(check.missingKeys, check.missing)})`
            : `the ${check.blobs} stored file(s) the database names are all in ${where}`,
        ].filter(Boolean);
        output(opts, { ...check, where }, lines.join('\n'));
        if (check.missing) process.exitCode = 1;
      }),
    );
}
