import type { Command } from 'commander';
import type { Config } from '../src/config';
import type { RunningServer } from '../src/server';
import { startServer } from '../src/server';
import { iso } from '../src/ids';
import { hasAdmin } from '../src/account/account.store';
import { openSetupLink, setupUrl, SETUP_LINK_TTL_MS } from '../src/setup/first-admin';
import { cliConfig, common, runAction, type CommonOptions } from './context';
import { networkBases, openableBase, recordListening } from './server-address';

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
        // The CLI's links (login-link, setup-link) start with the address this server really has.
        const forget = recordListening(config.dataDir, server.url);
        await printFirstRun(server, config);
        const shutdown = async (signal: string) => {
          server.deps.log.info('shutting down', { signal });
          const force = setTimeout(() => process.exit(1), 5000);
          forget();
          await server.stop();
          clearTimeout(force);
          process.exit(0);
        };
        process.once('SIGTERM', () => void shutdown('SIGTERM'));
        process.once('SIGINT', () => void shutdown('SIGINT'));
      }),
    );
}

/**
 * While the server has no admin: a one-time setup link, written to the console only (straight to
 * stdout, never through the logger, whose lines may be shipped elsewhere, and never served). It
 * starts with PARLEY_PUBLIC_URL, or else with the address this server is bound to.
 */
async function printFirstRun(server: RunningServer, config: Config): Promise<void> {
  const cli = `parley user create --email you@example.org --admin --data-dir ${config.dataDir}`;
  if (!config.web) {
    // No web app, no setup page: the command line is the way in.
    if (!(await server.deps.store.read((tx) => hasAdmin(tx)))) process.stdout.write(`No admin yet. Create one:\n  ${cli}\n`);
    return;
  }
  const link = await server.deps.store.write((tx) => openSetupLink(tx, SETUP_LINK_TTL_MS, server.deps.now()));
  if (!link) return;
  const base = config.publicUrl ?? openableBase(config.host, server.port);
  const others = config.publicUrl ? [] : networkBases(config.host, server.port);
  const lines = [
    '',
    `Parley has no admin yet. Open this link in a browser to create one (it works once, until ${iso(link.expiresAt)}):`,
    '',
    `  ${setupUrl(base, link.token)}`,
    ...(others.length ? ['', 'or, from another machine on your network:', ...others.map((b) => `  ${setupUrl(b, link.token)}`)] : []),
    '',
    `Lost it? \`parley setup-link\` makes a new one. Or create the admin from the command line: ${cli}`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}
