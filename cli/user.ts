import type { Command } from 'commander';
import { ACCOUNT_TYPES, SUBSCRIPTION_TIERS, createUser, findUserByEmail, listUsers, updateUser, type AccountType, type UserPatch } from '../src/account/account.store';
import { userView } from '../src/account/account.view';
import type { Db } from '../src/db/connection';
import { common, openCliDb, output, runAction, CliError, type CommonOptions } from './context';

/** A date, or a date and time with an optional zone: what `--expires` accepts. */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time as epoch ms, NaN when it is not one. A time without a zone is
 * UTC, as a date alone is (Date.parse would read it as the machine's local time). Dates that do
 * not exist are refused: Date.parse rolls 2027-02-30 over to March 2.
 */
function parseIsoDate(text: string): number {
  const m = ISO_DATE.exec(text);
  if (!m) return Number.NaN;
  const [year, month, day, hour = '0', minute = '0', second = '0'] = m.slice(1, 7);
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysInMonth) return Number.NaN;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return Number.NaN;
  return Date.parse(m[4] !== undefined && m[7] === undefined ? `${text}Z` : text);
}

export function requireUser(db: Db, email: string) {
  const user = findUserByEmail(db, email);
  if (!user) throw new CliError(`no user with e-mail ${email}`);
  return user;
}

const oneOf = <T extends string>(value: string, allowed: readonly T[], what: string): T => {
  const v = value.toUpperCase();
  if (!(allowed as readonly string[]).includes(v)) throw new CliError(`${what} must be one of ${allowed.join(', ')}`);
  return v as T;
};

export function userCommands(program: Command) {
  const user = program.command('user').description('manage users');

  common(user.command('create'))
    .description('create a user')
    .requiredOption('--email <email>', 'e-mail address (unique)')
    .option('--name <name>', 'display name')
    .option('--account-type <type>', `one of ${ACCOUNT_TYPES.join(', ')}`)
    .action(
      runAction((opts: CommonOptions & { email: string; name?: string; accountType?: string }) => {
        if (!/^[^@\s]+@[^@\s]+$/.test(opts.email)) throw new CliError(`not an e-mail address: ${opts.email}`);
        const { db } = openCliDb(opts);
        if (findUserByEmail(db, opts.email)) throw new CliError(`a user with e-mail ${opts.email} already exists`);
        const accountType = opts.accountType ? oneOf<AccountType>(opts.accountType, ACCOUNT_TYPES, '--account-type') : undefined;
        const u = createUser(db, { email: opts.email, name: opts.name, accountType });
        output(opts, userView(u), `created user ${u.email} (${u.id})`);
      }),
    );

  common(user.command('list'))
    .description('list users')
    .action(
      runAction((opts: CommonOptions) => {
        const { db } = openCliDb(opts);
        const rows = listUsers(db).map(userView);
        output(
          opts,
          rows,
          rows.length
            ? rows.map((u) => `${u.id}  ${u.email}  ${u.name || '-'}  ${u.accountType}  ${u.subscription.tier}${u.isLocked ? '  locked' : ''}`).join('\n')
            : 'no users',
        );
      }),
    );

  common(user.command('set'))
    .description("change a user's subscription, account type lock or profile")
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
    .action(
      runAction(
        (
          opts: CommonOptions & {
            email: string; name?: string; tier?: string; active?: boolean; inactive?: boolean; expires?: string;
            product?: string; accountType?: string; locked?: boolean; unlocked?: boolean;
          },
        ) => {
          if (opts.active && opts.inactive) throw new CliError('--active and --inactive exclude each other');
          if (opts.locked && opts.unlocked) throw new CliError('--locked and --unlocked exclude each other');
          const patch: UserPatch = {};
          if (opts.name !== undefined) patch.name = opts.name;
          if (opts.tier) patch.subscriptionTier = oneOf(opts.tier, SUBSCRIPTION_TIERS, '--tier');
          if (opts.active) patch.subscriptionActive = true;
          if (opts.inactive) patch.subscriptionActive = false;
          if (opts.expires !== undefined) {
            if (opts.expires === 'none') patch.subscriptionExpiresAt = null;
            else {
              // ISO 8601 only: Date.parse also takes "Dec 25" or "12" (as 2001), which would store a
              // subscription that ended long ago and say nothing.
              const ms = parseIsoDate(opts.expires);
              if (Number.isNaN(ms)) throw new CliError(`--expires is not an ISO 8601 date (2027-05-01 or 2027-05-01T12:00:00Z): ${opts.expires}`);
              patch.subscriptionExpiresAt = ms;
            }
          }
          if (opts.product !== undefined) patch.subscriptionProductId = opts.product === 'none' ? null : opts.product;
          if (opts.accountType) patch.accountType = oneOf<AccountType>(opts.accountType, ACCOUNT_TYPES, '--account-type');
          if (opts.locked) patch.isLocked = true;
          if (opts.unlocked) patch.isLocked = false;
          if (Object.keys(patch).length === 0) throw new CliError('nothing to change: give at least one option');
          const { db } = openCliDb(opts);
          const u = requireUser(db, opts.email);
          const updated = updateUser(db, u.id, patch)!;
          output(opts, userView(updated), `updated ${updated.email}`);
        },
      ),
    );
}
