import type { Command } from 'commander';
import { ACCOUNT_TYPES, SUBSCRIPTION_TIERS, findUserByEmail, listUsers } from '../src/account/account.store';
import { userWithAdminView } from '../src/account/account.view';
import { AdminRefusal, changeUser, createCheckedUser, type UserChange } from '../src/admin/user-admin';
import type { Store } from '../src/db/work';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';

export async function requireUser(store: Store, email: string) {
  const user = await store.read((tx) => findUserByEmail(tx, email));
  if (!user) throw new CliError(`no user with e-mail ${email}`);
  return user;
}

/** The shared rules (src/admin/user-admin.ts) refuse with an AdminRefusal; the CLI says it as its own error. */
async function asCliError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AdminRefusal) throw new CliError(err.message.replace(/^(tier|account type|expiry)\b/, (w) => `--${w === 'account type' ? 'account-type' : w === 'expiry' ? 'expires' : w}`));
    throw err;
  }
}

export function userCommands(program: Command) {
  const user = program.command('user').description('manage users');

  common(user.command('create'))
    .description('create a user')
    .requiredOption('--email <email>', 'e-mail address (unique)')
    .option('--name <name>', 'display name')
    .option('--account-type <type>', `one of ${ACCOUNT_TYPES.join(', ')}`)
    .option('--admin', 'the user may administer this server (the web app\'s Admin page, admin/* operations)')
    .action(
      runAction(async (opts: CommonOptions & { email: string; name?: string; accountType?: string; admin?: boolean }) => {
        const { store } = await openCliStore(opts);
        const u = await asCliError(() => store.write((tx) => createCheckedUser(tx, { email: opts.email, name: opts.name, accountType: opts.accountType, isAdmin: opts.admin }, Date.now())));
        output(opts, userWithAdminView(u), `created user ${u.email} (${u.id})${u.isAdmin ? ', admin' : ''}`);
      }),
    );

  common(user.command('list'))
    .description('list users')
    .action(
      runAction(async (opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        const rows = (await store.read((tx) => listUsers(tx))).map((u) => userWithAdminView(u));
        output(
          opts,
          rows,
          rows.length
            ? rows
                .map((u) => `${u.id}  ${u.email}  ${u.name || '-'}  ${u.accountType}  ${u.subscription.tier}${u.isLocked ? '  locked' : ''}${u.isAdmin ? '  admin' : ''}`)
                .join('\n')
            : 'no users',
        );
      }),
    );

  common(user.command('set'))
    .description("change a user's subscription, account type lock, admin flag or profile")
    .requiredOption('--email <email>', 'the user to change')
    .option('--name <name>', 'display name')
    .option('--tier <tier>', `subscription tier: ${SUBSCRIPTION_TIERS.join(', ')}`)
    .option('--active', 'subscription is active')
    .option('--inactive', 'subscription is not active')
    .option('--expires <iso>', 'subscription expiry (ISO 8601 date or date-time, UTC unless a zone is given), or "none"')
    .option('--product <id>', 'store product id, or "none"')
    .option('--account-type <type>', `one of ${ACCOUNT_TYPES.join(', ')}`)
    .option('--locked', 'lock the account type selection')
    .option('--unlocked', 'unlock the account type selection')
    .option('--admin', 'the user may administer this server')
    .option('--no-admin', 'the user may no longer administer this server')
    .action(
      runAction(
        async (
          opts: CommonOptions & {
            email: string; name?: string; tier?: string; active?: boolean; inactive?: boolean; expires?: string;
            product?: string; accountType?: string; locked?: boolean; unlocked?: boolean; admin?: boolean;
          },
        ) => {
          if (opts.active && opts.inactive) throw new CliError('--active and --inactive exclude each other');
          if (opts.locked && opts.unlocked) throw new CliError('--locked and --unlocked exclude each other');
          const change: UserChange = {
            name: opts.name,
            tier: opts.tier,
            active: opts.active ? true : opts.inactive ? false : undefined,
            expires: opts.expires === 'none' ? null : opts.expires,
            product: opts.product === 'none' ? null : opts.product,
            accountType: opts.accountType,
            locked: opts.locked ? true : opts.unlocked ? false : undefined,
            admin: opts.admin,
          };
          const { store } = await openCliStore(opts);
          const u = await requireUser(store, opts.email);
          const updated = await asCliError(() => store.write((tx) => changeUser(tx, u.id, change, undefined, Date.now())));
          output(opts, userWithAdminView(updated), `updated ${updated.email}`);
        },
      ),
    );
}
