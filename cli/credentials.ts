import type { Command } from 'commander';
import { createApiKey, createSession, listApiKeys, revokeApiKey, findSessionById, listActiveSessions, revokeSession } from '../src/auth/auth.store';
import { DAY_MS } from '../src/time';
import { sessionView } from '../src/auth/sessions.view';
import { iso } from '../src/ids';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';
import { requireUser } from './user';

export function credentialCommands(program: Command) {
  const session = program.command('session').description('manage sign-in sessions');
  common(session.command('create'))
    .description('create a session for a user and print its bearer token (shown once)')
    .requiredOption('--email <email>', 'the user')
    .action(
      runAction(async (opts: CommonOptions & { email: string }) => {
        const { store, config } = await openCliStore(opts);
        const user = await requireUser(store, opts.email);
        const { token, row } = await store.write((tx) => createSession(tx, user.id, config.sessionTtlDays * DAY_MS, { userAgent: 'parley-cli' }, Date.now()));
        output(opts, { token, sessionId: row.id, expiresAt: iso(row.expiresAt) }, token);
      }),
    );

  common(session.command('list'))
    .description("list a user's active sessions (never the tokens)")
    .requiredOption('--email <email>', 'the user')
    .action(
      runAction(async (opts: CommonOptions & { email: string }) => {
        const { store } = await openCliStore(opts);
        const user = await requireUser(store, opts.email);
        const rows = (await store.read((tx) => listActiveSessions(tx, user.id, Date.now()))).map((s) => {
          const { current: _, ...view } = sessionView(s);
          return view;
        });
        output(
          opts,
          rows,
          rows.length
            ? rows.map((s) => `${s.sessionId}  last used ${s.lastUsedAt}  expires ${s.expiresAt}  ${s.userAgent ?? '-'}`).join('\n')
            : 'no active sessions',
        );
      }),
    );
  common(session.command('revoke'))
    .description('end a session by its id (the device is signed out)')
    .argument('<sessionId>', 'the session id (see `parley session list`)')
    .action(
      runAction(async (sessionId: string, opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        const row = await store.read((tx) => findSessionById(tx, sessionId));
        if (!row) throw new CliError(`no session with id ${sessionId}`);
        const now = Date.now();
        await store.write((tx) => revokeSession(tx, sessionId, now));
        output(opts, { sessionId, revokedAt: iso(row.revokedAt ?? now) }, `revoked ${sessionId}`);
      }),
    );

  const apikey = program.command('apikey').description('manage API keys');
  common(apikey.command('create'))
    .description('create an API key for a user and print it (shown once)')
    .requiredOption('--email <email>', 'the user')
    .option('--name <name>', 'a name to recognise the key by', 'cli')
    .action(
      runAction(async (opts: CommonOptions & { email: string; name: string }) => {
        const { store } = await openCliStore(opts);
        const user = await requireUser(store, opts.email);
        const { key, row } = await store.write((tx) => createApiKey(tx, user.id, opts.name, Date.now()));
        output(opts, { keyId: row.id, key, name: row.name, prefix: row.prefix }, key);
      }),
    );
  common(apikey.command('list'))
    .description("list a user's API keys (never the keys themselves)")
    .requiredOption('--email <email>', 'the user')
    .action(
      runAction(async (opts: CommonOptions & { email: string }) => {
        const { store } = await openCliStore(opts);
        const user = await requireUser(store, opts.email);
        const rows = (await store.read((tx) => listApiKeys(tx, user.id))).map((k) => ({
          keyId: k.id,
          name: k.name,
          prefix: k.prefix,
          createdAt: iso(k.createdAt),
          lastUsedAt: k.lastUsedAt == null ? null : iso(k.lastUsedAt),
          revokedAt: k.revokedAt == null ? null : iso(k.revokedAt),
        }));
        output(
          opts,
          rows,
          rows.length
            ? rows.map((k) => `${k.keyId}  ${k.prefix}…  ${k.name}  created ${k.createdAt}${k.revokedAt ? `  revoked ${k.revokedAt}` : ''}`).join('\n')
            : 'no API keys',
        );
      }),
    );
  common(apikey.command('revoke'))
    .description('revoke an API key by its id')
    .argument('<keyId>', 'the key id (see `parley apikey list`)')
    .action(
      runAction(async (keyId: string, opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        const row = await store.write((tx) => revokeApiKey(tx, keyId, undefined, Date.now()));
        if (!row) throw new CliError(`no API key with id ${keyId}`);
        output(opts, { keyId, revokedAt: iso(row.revokedAt!) }, `revoked ${keyId}`);
      }),
    );
}
