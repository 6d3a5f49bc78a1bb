import type { Command } from 'commander';
import { resolve } from 'node:path';
import { migrate } from '../src/db/migrate';
import { backupDatabase } from '../src/db/backup';
import { openDataDir } from '../src/db/connection';
import { cliConfig, common, output, runAction, CliError, type CommonOptions } from './context';

export function dbCommands(program: Command) {
  common(program.command('migrate'))
    .description('apply pending database migrations')
    .action(
      runAction((opts: CommonOptions) => {
        const config = cliConfig(opts);
        const db = openDataDir(config.dataDir);
        const applied = migrate(db.$client);
        db.$client.close();
        output(opts, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      }),
    );

  common(program.command('backup'))
    .description('write a consistent copy of the database to FILE (safe while the server runs)')
    .argument('<file>', 'where to write the copy; must not exist')
    .action(
      runAction((file: string, opts: CommonOptions) => {
        const config = cliConfig(opts);
        const db = openDataDir(config.dataDir);
        try {
          backupDatabase(db.$client, resolve(file));
        } catch (err) {
          throw new CliError((err as Error).message);
        } finally {
          db.$client.close();
        }
        output(opts, { file: resolve(file) }, `backup written to ${resolve(file)}`);
      }),
    );
}
