import type { Command } from 'commander';
import { startServer } from '../src/server';
import { countUsers } from '../src/account/account.store';
import { cliConfig, common, runAction, type CommonOptions } from './context';

export function serveCommand(program: Command) {
  common(program.command('serve'))
    .description('migrate the database and start the HTTP server')
    .option('--host <host>', 'listen address (env PARLEY_HOST, default 127.0.0.1)')
    .option('--port <port>', 'listen port (env PARLEY_PORT, default 8787)')
    .action(
      runAction(async (opts: CommonOptions & { host?: string; port?: string }) => {
        const config = cliConfig(opts, ['--host', '--port']);
        const server = await startServer(config);
        process.stdout.write(`Parley listening on ${server.url} (data in ${server.database})\n`);
        if ((await server.deps.store.read((tx) => countUsers(tx))) === 0)
          process.stdout.write(
            `No users yet. Create one, and a key to call the API with:\n  parley user create --email you@example.org --data-dir ${config.dataDir}\n  parley apikey create --email you@example.org --data-dir ${config.dataDir}\n`,
          );
        const shutdown = async (signal: string) => {
          server.deps.log.info('shutting down', { signal });
          const force = setTimeout(() => process.exit(1), 5000);
          await server.stop();
          clearTimeout(force);
          process.exit(0);
        };
        process.once('SIGTERM', () => void shutdown('SIGTERM'));
        process.once('SIGINT', () => void shutdown('SIGINT'));
      }),
    );
}
