import type { Command } from 'commander';
import { createLoginLink } from '../src/auth/login-link.store';
import { LOGIN_LINK_PATH } from '../src/auth/login-link.routes';
import { iso } from '../src/ids';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';
import { requireUser } from './user';
import { serverAddress } from './server-address';

const MAX_TTL_MINUTES = 24 * 60;

export function loginLinkCommand(program: Command) {
  common(program.command('login-link'))
    .description('make a one-time sign-in link for a user (for a browser; no identity provider needed)')
    .requiredOption('--email <email>', 'the user')
    .option('--ttl-minutes <minutes>', `minutes the link stays valid (1–${MAX_TTL_MINUTES})`, '15')
    .action(
      runAction(async (opts: CommonOptions & { email: string; ttlMinutes: string }) => {
        const minutes = /^\d+$/.test(opts.ttlMinutes) ? Number(opts.ttlMinutes) : NaN;
        if (!(minutes >= 1 && minutes <= MAX_TTL_MINUTES)) throw new CliError(`--ttl-minutes must be a whole number from 1 to ${MAX_TTL_MINUTES}, got "${opts.ttlMinutes}"`);
        const { store, config, env } = await openCliStore(opts);
        const user = await requireUser(store, opts.email);
        const { token, row } = await store.write((tx) => createLoginLink(tx, user.id, minutes * 60_000, Date.now()));
        const address = serverAddress(config, env);
        const url = `${address.base}${LOGIN_LINK_PATH}?token=${token}`;
        if (address.note && !opts.json) process.stderr.write(`note: ${address.note}\n`);
        output(opts, { url, email: user.email, expiresAt: iso(row.expiresAt), addressSource: address.source }, url);
        if (!opts.json) process.stderr.write(`works once, until ${iso(row.expiresAt)} (${minutes} min)\n`);
      }),
    );
}
