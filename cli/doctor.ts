import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../src/config';
import { renderChecks, runDoctor } from '../src/ops/doctor';
import { cliConfig, common, output, runAction, type CommonOptions } from './context';
import { connectionLinesOf } from './connection';

export function doctorCommand(program: Command) {
  common(program.command('doctor'))
    .description('check the data directory, database, migrations, settings, image codec and providers; print what to fix')
    .action(
      runAction(async (opts: CommonOptions) => {
        let config: Config | undefined;
        let configError: string | undefined;
        try {
          config = cliConfig(opts);
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          configError = err.message;
        }
        // A bad unrelated setting must not hide the data directory's checks.
        const dataDir = config?.dataDir ?? loadConfig({ PARLEY_DATA_DIR: process.env.PARLEY_DATA_DIR }, { '--data-dir': opts.dataDir }).dataDir;
        // Before the file checks: the database this opens is closed again when they look at its files.
        const connectionLines = config && (await connectionLinesOf(config));
        const checks = await runDoctor({ config, configError, dataDir, connectionLines });
        output(opts, { ok: !checks.some((c) => c.status === 'fail'), checks }, renderChecks(checks));
        if (checks.some((c) => c.status === 'fail')) process.exitCode = 1;
      }),
    );
}
