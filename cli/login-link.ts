import type { Command } from 'commander';
import type { Config } from '../src/config';
import { createLoginLink } from '../src/auth/login-link.store';
import { LOGIN_LINK_PATH } from '../src/auth/login-link.routes';
import { iso } from '../src/ids';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';
import { requireUser } from './user';

const MAX_TTL_MINUTES = 24 * 60;

/**
 * The address the link starts with: PARLEY_PUBLIC_URL, else the address `serve` listens on (so a
 * laptop install works as it is). "Every interface" is no address a browser can open: the link
 * then names this machine's loopback, and the admin is told to set the public URL.
 */
function linkBase(config: Config): { base: string; guessed: boolean } {
  if (config.publicUrl) return { base: config.publicUrl, guessed: false };
  const any = config.host === '0.0.0.0' || config.host === '::';
  const host = any ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return { base: `http://${host}:${config.port}`, guessed: true };
}

export function loginLinkCommand(program: Command) {
  common(program.command('login-link'))
    .description('make a one-time sign-in link for a user (for a browser; no identity provider needed)')
    .requiredOption('--email <email>', 'the user')
    .option('--ttl-minutes <minutes>', `minutes the link stays valid (1–${MAX_TTL_MINUTES})`, '15')
    .action(
      runAction(async (opts: CommonOptions & { email: string; ttlMinutes: string }) => {
        const minutes = /^\d+$/.test(opts.ttlMinutes) ? Number(opts.ttlMinutes) : NaN;
        if (!(minutes >= 1 && minutes <= MAX_TTL_MINUTES)) throw new CliError(`--ttl-minutes must be a whole number from 1 to ${MAX_TTL_MINUTES}, got "${opts.ttlMinutes}"`);
        const { store, config } = await openCliStore(opts);
        const user = await requireUser(store, opts.email);
        const { token, row } = await store.write((tx) => createLoginLink(tx, user.id, minutes * 60_000, Date.now()));
        const { base, guessed } = linkBase(config);
        const url = `${base}${LOGIN_LINK_PATH}?token=${token}`;
        if (guessed && !opts.json)
          process.stderr.write(`note: PARLEY_PUBLIC_URL is not set, so the link uses the listening address (${base}); set it if browsers reach Parley at another address\n`);
        output(opts, { url, email: user.email, expiresAt: iso(row.expiresAt) }, url);
        if (!opts.json) process.stderr.write(`works once, until ${iso(row.expiresAt)} (${minutes} min)\n`);
      }),
    );
}
