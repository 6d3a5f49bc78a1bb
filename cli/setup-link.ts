import type { Command } from 'commander';
import { iso } from '../src/ids';
import { openSetupLink, setupUrl, SETUP_LINK_TTL_MS } from '../src/setup/first-admin';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';
import { serverAddress } from './server-address';

/**
 * `parley setup-link`: a fresh one-time setup link while the server has no admin, for when the one
 * `parley serve` printed at start is lost (a service's journal rotated, a terminal closed) or has
 * expired. The CLI stays the other way in: `parley user create --admin`.
 */
export function setupLinkCommand(program: Command) {
  common(program.command('setup-link'))
    .description('make a one-time link that creates the first admin in a browser (while the server has no admin)')
    .action(
      runAction(async (opts: CommonOptions) => {
        const { store, config, env } = await openCliStore(opts);
        if (!config.web) throw new CliError('the web app is off (PARLEY_WEB=false), so there is no setup page: create the admin with `parley user create --email you@example.org --admin`');
        const made = await store.write((tx) => openSetupLink(tx, SETUP_LINK_TTL_MS, Date.now()));
        if (!made) throw new CliError('this server already has an admin: sign in, or make a sign-in link with `parley login-link --email <admin e-mail>`');
        const address = serverAddress(config, env);
        const url = setupUrl(address.base, made.token);
        if (address.note && !opts.json) process.stderr.write(`note: ${address.note}\n`);
        output(opts, { url, expiresAt: iso(made.expiresAt), addressSource: address.source }, url);
        if (!opts.json) process.stderr.write(`open it in a browser to create the first admin; it works once, until ${iso(made.expiresAt)}\n`);
      }),
    );
}
