import type { Command } from 'commander';
import { Database } from 'bun:sqlite';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { migrate } from '../src/db/migrate';
import { backupFile, usedBytes } from '../src/db/backup';
import { restoreDatabase } from '../src/db/restore';
import { DB_FILE, openDataDir } from '../src/db/connection';
import { cliConfig, common, output, runAction, CliError, type CommonOptions } from './context';
import { createProgress } from './progress';

export function dbCommands(program: Command) {
  common(program.command('migrate'))
    .description('apply pending database migrations')
    .action(
      runAction((opts: CommonOptions) => {
        const config = cliConfig(opts);
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
    .description('write a consistent copy of the database to FILE (safe while the server runs)')
    .argument('<file>', 'where to write the copy; must not exist')
    .action(
      runAction(async (file: string, opts: CommonOptions) => {
        const config = cliConfig(opts);
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
        try {
          await backupFile(source, target, size, (f) => progress.update(f, `of ${mb} MB`), interrupted.signal);
        } catch (err) {
          throw new CliError((err as Error).message);
        } finally {
          progress.done();
          process.off('SIGINT', stop).off('SIGTERM', stop);
        }
        output(opts, { file: target }, `backup written to ${target}`);
      }),
    );

  common(program.command('restore'))
    .description('replace the database with a backup FILE, verified first; the server must be stopped')
    .argument('<file>', 'a backup written by `parley backup`')
    .action(
      runAction((file: string, opts: CommonOptions) => {
        const config = cliConfig(opts);
        let restored;
        try {
          restored = restoreDatabase(config.dataDir, resolve(file));
        } catch (err) {
          throw new CliError((err as Error).message);
        }
        const lines = [`restored ${resolve(file)} to ${restored.file}`];
        if (restored.kept) lines.push(`the database it replaced is kept as ${restored.kept}`);
        if (restored.pending.length) lines.push(`${restored.pending.length} migration(s) will run when the server starts`);
        output(opts, restored, lines.join('\n'));
      }),
    );
}
