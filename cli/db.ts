import type { Command } from 'commander';
import { Database } from 'bun:sqlite';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { migrate } from '../src/db/migrate';
import { backupFile, usedBytes } from '../src/db/backup';
import { restoreDatabase } from '../src/db/restore';
import { DB_FILE, openDataDir } from '../src/db/connection';
import { cliConfig, common, output, refusePostgres, runAction, CliError, type CommonOptions } from './context';
import { createProgress } from './progress';
import { connectPg } from '../src/db/pg/connect';
import { maskUrl } from '../src/mask-secrets';
import { migratePg } from '../src/db/pg/migrate';
import { copyPgToSqlite, copySqliteToPg, CopyError, type CopyReport } from '../src/db/copy/copy-database';
import { checkCopiedFiles, pgBlobPages, type FilesCheck } from '../src/files/check-copied-files';
import { blobPagesOf } from '../src/db/backup-blobs';
import { createBlobStorage } from '../src/files/blob-storage';
import { backupFilesLines, blobDirOf, checkFilesCommand, copyFilesLines, restoreFilesLines, whereFiles } from './db-files';

export function dbCommands(program: Command) {
  common(program.command('migrate'))
    .description('apply pending database migrations')
    .action(
      runAction(async (opts: CommonOptions) => {
        const config = cliConfig(opts);
        if (config.databaseUrl) return migratePostgres(opts, config.databaseUrl);
        const db = openDataDir(config.dataDir);
        const progress = createProgress('migrating');
        let applied: string[];
        try {
          applied = migrate(db.$client, undefined, (done, total, tag) => progress.update(total ? done / total : 1, tag ? `(${done + 1}/${total} ${tag})` : ''));
        } finally {
          progress.done();
          db.$client.close();
        }
        output(opts, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      }),
    );

  common(program.command('backup'))
    .description('write a consistent copy of the database to FILE, and the stored files it names to FILE.files/ (FILE without .db; safe while the server runs)')
    .argument('<file>', 'where to write the copy; must not exist')
    .action(
      runAction(async (file: string, opts: CommonOptions) => {
        const config = cliConfig(opts);
        refusePostgres(config, 'back PostgreSQL up with `pg_dump -Fc`');
        const target = resolve(file);
        const source = join(config.dataDir, DB_FILE);
        if (!existsSync(source)) throw new CliError(`no database at ${source}`);
        const sqlite = new Database(source, { readonly: true });
        const size = usedBytes(sqlite);
        sqlite.close();
        const progress = createProgress('backing up');
        const mb = (size / 1e6).toFixed(1);
        // Ctrl-C or a stop of the timer's unit: remove the unfinished copy before exiting.
        const interrupted = new AbortController();
        const stop = () => interrupted.abort();
        process.once('SIGINT', stop).once('SIGTERM', stop);
        // Files in a bucket are not copied: the store's own tools back it up.
        const blobDir = config.filesS3Bucket ? undefined : blobDirOf(config);
        let result;
        try {
          result = await backupFile(source, target, size, (f) => progress.update(f, `of ${mb} MB`), interrupted.signal, blobDir);
        } catch (err) {
          throw new CliError((err as Error).message);
        } finally {
          progress.done();
          process.off('SIGINT', stop).off('SIGTERM', stop);
        }
        const files = result.files ? { storage: 'disk', ...result.files } : { storage: 's3', where: whereFiles(config) };
        output(opts, { file: target, files }, [`backup written to ${target}`, ...backupFilesLines(config, result.files)].join('\n'));
      }),
    );

  common(program.command('restore'))
    .description('replace the database with a backup FILE, verified first, and put back the stored files it names from FILE.files/; the server must be stopped')
    .argument('<file>', 'a backup written by `parley backup`')
    .action(
      runAction(async (file: string, opts: CommonOptions) => {
        const config = cliConfig(opts);
        refusePostgres(config, 'restore PostgreSQL with `pg_restore`');
        let restored;
        try {
          restored = await restoreDatabase(config.dataDir, resolve(file), undefined, config.filesS3Bucket ? 's3' : 'disk');
        } catch (err) {
          throw new CliError((err as Error).message);
        }
        const lines = [`restored ${resolve(file)} to ${restored.file}`];
        if (restored.kept) lines.push(`the database it replaced is kept as ${restored.kept}`);
        if (restored.pending.length) lines.push(`${restored.pending.length} migration(s) will run when the server starts`);
        lines.push(...restoreFilesLines(config, restored.files));
        output(opts, { ...restored, files: restored.files ? { storage: 'disk', ...restored.files } : { storage: 's3', where: whereFiles(config) } }, lines.join('\n'));
      }),
    );

  const db = program.command('db').description('move the database between SQLite and PostgreSQL; check the stored files it names');
  checkFilesCommand(db);
  common(db.command('copy'))
    .description('copy the SQLite database into an empty PostgreSQL one (--to), or a PostgreSQL one into a new SQLite database (--from); verified table by table')
    .option('--to [url]', 'postgres://… to copy the data directory\'s SQLite database into (no URL: PARLEY_DATABASE_URL, which keeps the password out of the process list)')
    .option('--from [url]', 'postgres://… to copy into a new parley.db in the data directory (no URL: PARLEY_DATABASE_URL)')
    .action(
      runAction(async (opts: CommonOptions & { to?: string | true; from?: string | true }) => {
        const config = cliConfig(opts);
        if ((opts.to === undefined) === (opts.from === undefined)) throw new CliError('say where to copy: --to postgres://… (SQLite to PostgreSQL) or --from postgres://… (PostgreSQL to SQLite)');
        const given = opts.to ?? opts.from;
        const url = given === true ? config.databaseUrl : given;
        if (!url) throw new CliError(`${opts.to !== undefined ? '--to' : '--from'} needs a postgres:// URL, or PARLEY_DATABASE_URL set`);
        const sql = connectOrSay(url);
        const shown = maskUrl(url);
        const progress = createProgress('copying');
        let report: CopyReport;
        let files: FilesCheck;
        try {
          const onProgress = (done: number, total: number, table: string) => progress.update(total ? done / total : 1, `${done}/${total} rows (${table})`);
          report = opts.to !== undefined ? await copySqliteToPg(config.dataDir, sql, onProgress) : await copyPgToSqlite(sql, config.dataDir, onProgress);
        } catch (err) {
          progress.done();
          await sql.close();
          if (err instanceof CopyError) throw new CliError(err.message);
          // The client's own words ("connection refused", "password authentication failed").
          throw new CliError(`${shown}: ${(err as Error).message}`);
        }
        progress.done();
        try {
          files = await checkCopiedFilesOf(opts.to !== undefined ? sql : undefined, config);
        } catch (err) {
          throw new CliError(`the rows were copied and verified, but looking the stored files up in ${whereFiles(config)} failed: ${(err as Error).message}`);
        } finally {
          await sql.close();
        }
        const seconds = (report.ms / 1000).toFixed(1);
        const lines =
          opts.to !== undefined
            ? [
                `copied ${report.rows} rows in ${report.tables.length} tables from ${join(config.dataDir, DB_FILE)} to ${shown} in ${seconds} s; every table's row count and SHA-256 match the source`,
                'writes the server made after the copy began are not in it: for the final move, stop the server and copy again into an empty database',
                'to run on it: set PARLEY_DATABASE_URL in the settings file and start the instances (docs/scaling.md)',
                ...copyFilesLines(config, files, 'to'),
              ]
            : [
                `copied ${report.rows} rows in ${report.tables.length} tables from ${shown} to ${join(config.dataDir, DB_FILE)} in ${seconds} s; every table's row count and SHA-256 match the source`,
                'to run on it: unset PARLEY_DATABASE_URL and start `parley serve` with this data directory',
                ...copyFilesLines(config, files, 'from'),
              ];
        output(opts, { ...report, files: { ...files, where: whereFiles(config) }, source: opts.to !== undefined ? join(config.dataDir, DB_FILE) : shown, target: opts.to !== undefined ? shown : join(config.dataDir, DB_FILE) }, lines.join('\n'));
      }),
    );
}

/**
 * The stored files the copied database names, looked up where the command's settings keep them
 * (the data directory's files/, or the bucket of PARLEY_FILES_S3_*): the copy moved the rows only.
 */
async function checkCopiedFilesOf(pg: ReturnType<typeof connectPg> | undefined, config: ReturnType<typeof cliConfig>): Promise<FilesCheck> {
  const storage = createBlobStorage(config);
  if (pg) return checkCopiedFiles(pgBlobPages(pg), storage);
  const sqlite = new Database(join(config.dataDir, DB_FILE), { readonly: true });
  try {
    return await checkCopiedFiles(blobPagesOf(sqlite), storage);
  } finally {
    sqlite.close();
  }
}

/** `parley migrate` with PARLEY_DATABASE_URL: the PostgreSQL migrations, safe beside instances starting at once. */
async function migratePostgres(opts: CommonOptions, url: string): Promise<void> {
  const sql = connectOrSay(url);
  const progress = createProgress('migrating');
  let applied: string[];
  try {
    applied = await migratePg(sql, undefined, (done, total, tag) => progress.update(total ? done / total : 1, tag ? `(${done + 1}/${total} ${tag})` : ''));
  } catch (err) {
    throw new CliError(`${maskUrl(url)}: ${(err as Error).message}`);
  } finally {
    progress.done();
    await sql.close();
  }
  output(opts, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
}

/** A client for `url`, or the admin's error when it is not a PostgreSQL URL. */
function connectOrSay(url: string) {
  try {
    return connectPg(url);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}
