import { ACCOUNT_TYPES, SUBSCRIPTION_TIERS, countAdminsExcept, createUser, findUser, findUserByEmail, updateUser, type AccountType, type UserPatch } from '../account/account.store';
import type { Tx, Work } from '../db/work';
import type { User } from '../db/schema';

/**
 * The rules of managing users, shared by `parley user ...` (cli/user.ts) and the admin operations
 * (admin.routes.ts), so the CLI and the web app refuse and accept exactly the same things.
 */

/** Why a change was refused; the CLI prints the message, the API answers it with the matching status. */
export class AdminRefusal extends Error {
  constructor(
    readonly kind: 'invalid' | 'conflict' | 'missing',
    message: string,
  ) {
    super(message);
  }
}

/** A date, or a date and time with an optional zone: what an expiry accepts. */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time as epoch ms, NaN when it is not one. A time without a zone is
 * UTC, as a date alone is (Date.parse would read it as the machine's local time). Dates that do
 * not exist are refused: Date.parse rolls 2027-02-30 over to March 2.
 */
export function parseIsoDate(text: string): number {
  const m = ISO_DATE.exec(text);
  if (!m) return Number.NaN;
  const [year, month, day, hour = '0', minute = '0', second = '0'] = m.slice(1, 7);
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysInMonth) return Number.NaN;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return Number.NaN;
  return Date.parse(m[4] !== undefined && m[7] === undefined ? `${text}Z` : text);
}

/** `value` upper-cased when it is one of `allowed`; `what` names the field in the refusal. */
export function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  const v = value.toUpperCase();
  if (!(allowed as readonly string[]).includes(v)) throw new AdminRefusal('invalid', `${what} must be one of ${allowed.join(', ')}`);
  return v as T;
}

/**
 * A new user: a plausible, unused e-mail address (run with `store.write`: one transaction, so an
 * admin is never seen, nor left behind by a failure, as a plain user).
 */
export function* createCheckedUser(tx: Tx, input: { email: string; name?: string; accountType?: string; isAdmin?: boolean }, now: number): Work<User> {
  if (!/^[^@\s]+@[^@\s]+$/.test(input.email)) throw new AdminRefusal('invalid', `not an e-mail address: ${input.email}`);
  if (yield* findUserByEmail(tx, input.email)) throw new AdminRefusal('conflict', `a user with e-mail ${input.email} already exists`);
  const accountType = input.accountType ? oneOf<AccountType>(input.accountType, ACCOUNT_TYPES, 'account type') : undefined;
  const user = yield* createUser(tx, { email: input.email, name: input.name, accountType }, now);
  return input.isAdmin ? (yield* updateUser(tx, user.id, { isAdmin: true }, now))! : user;
}

/** A change as an admin writes it: words ("PRO", an ISO date, "none"), checked and turned into a patch. */
export interface UserChange {
  name?: string;
  tier?: string;
  active?: boolean;
  /** ISO 8601 date or date-time, or null for no expiry. */
  expires?: string | null;
  /** Store product id, or null for none. */
  product?: string | null;
  accountType?: string;
  locked?: boolean;
  admin?: boolean;
}

export function patchOf(change: UserChange): UserPatch {
  const patch: UserPatch = {};
  if (change.name !== undefined) patch.name = change.name;
  if (change.tier !== undefined) patch.subscriptionTier = oneOf(change.tier, SUBSCRIPTION_TIERS, 'tier');
  if (change.active !== undefined) patch.subscriptionActive = change.active;
  if (change.expires !== undefined) {
    if (change.expires === null) patch.subscriptionExpiresAt = null;
    else {
      // ISO 8601 only: Date.parse also takes "Dec 25" or "12" (as 2001), which would store a
      // subscription that ended long ago and say nothing.
      const ms = parseIsoDate(change.expires);
      if (Number.isNaN(ms)) throw new AdminRefusal('invalid', `expiry is not an ISO 8601 date (2027-05-01 or 2027-05-01T12:00:00Z): ${change.expires}`);
      patch.subscriptionExpiresAt = ms;
    }
  }
  if (change.product !== undefined) patch.subscriptionProductId = change.product;
  if (change.accountType !== undefined) patch.accountType = oneOf<AccountType>(change.accountType, ACCOUNT_TYPES, 'account type');
  if (change.locked !== undefined) patch.isLocked = change.locked;
  if (change.admin !== undefined) patch.isAdmin = change.admin;
  return patch;
}

/**
 * Apply a change to a user (run with `store.write`). `actorId` is the admin making it through the API: an admin cannot
 * take their own admin flag away, and no change through the API removes the last admin (two
 * admins removing each other at once), so a server that has an admin keeps one. The CLI passes
 * no actor: it is how the first admin is made and how a lost one is restored.
 */
export function* changeUser(tx: Tx, userId: string, change: UserChange, actorId: string | undefined, now: number): Work<User> {
  const patch = patchOf(change);
  if (Object.keys(patch).length === 0) throw new AdminRefusal('invalid', 'nothing to change: give at least one field');
  if (!(yield* findUser(tx, userId))) throw new AdminRefusal('missing', 'no such user');
  if (actorId !== undefined && patch.isAdmin === false) {
    if (userId === actorId) throw new AdminRefusal('conflict', 'You cannot remove your own admin flag; ask another admin, or use `parley user set --no-admin`.');
    if ((yield* countAdminsExcept(tx, userId)) === 0) throw new AdminRefusal('conflict', 'This is the last admin; the server must keep one.');
  }
  return (yield* updateUser(tx, userId, patch, now))!;
}
