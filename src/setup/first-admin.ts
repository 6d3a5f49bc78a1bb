import type { Tx, Work } from '../db/work';
import type { User } from '../db/schema';
import { countAdminsExcept, findUserByEmail, hasAdmin, updateUser } from '../account/account.store';
import { createCheckedUser } from '../admin/user-admin';
import { createSetupToken, peekSetupToken, useSetupToken } from './setup.store';

/** Why a setup link cannot be used: not one Parley made, used, expired, or the server already has an admin. */
export type SetupRefusalReason = 'unknown' | 'used' | 'expired' | 'done';

export class SetupRefused extends Error {
  constructor(readonly reason: SetupRefusalReason) {
    super(`setup refused: ${reason}`);
  }
}

/** What `parley serve` prints: `psu_` and 256 bits in base64url. Anything else is a cut or mangled link. */
export const SETUP_TOKEN = /^psu_[A-Za-z0-9_-]{43}$/;

/**
 * The setup link's state as the page shows it before asking anything: usable (its expiry), or
 * why not. The token's own state comes first, so the same link opened a second time says "used"
 * rather than only "there is an admin".
 */
export function* checkSetupToken(tx: Tx, token: string, now: number): Work<{ expiresAt: number }> {
  if (!SETUP_TOKEN.test(token)) throw new SetupRefused('unknown');
  const state = yield* peekSetupToken(tx, token, now);
  if (!state.ok) throw new SetupRefused(state.reason);
  if (yield* hasAdmin(tx)) throw new SetupRefused('done');
  return { expiresAt: state.row.expiresAt };
}

/**
 * Use the link up and make the first admin, in one transaction (`store.write`): the token is
 * stamped used, the server is checked to have no admin yet, and the user is created as an admin —
 * or, when someone already has that e-mail address (made with `parley user create`, or signed
 * up), that user becomes the admin. The admin check queues behind every other change of admins
 * (`countAdminsExcept` takes the same lock), so two links used at once on two instances make one
 * admin, and the other is refused with `done`. A refusal rolls the whole work back.
 */
export function* createFirstAdmin(tx: Tx, token: string, input: { name: string; email: string }, now: number): Work<{ user: User; tokenId: string; existing: boolean }> {
  if (!SETUP_TOKEN.test(token)) throw new SetupRefused('unknown');
  const state = yield* useSetupToken(tx, token, now);
  if (!state.ok) throw new SetupRefused(state.reason);
  // No user has the empty id: every admin counts.
  if ((yield* countAdminsExcept(tx, '')) > 0) throw new SetupRefused('done');
  const email = input.email.trim();
  const name = input.name.trim();
  const existing = yield* findUserByEmail(tx, email);
  if (existing) {
    const user = (yield* updateUser(tx, existing.id, { isAdmin: true, ...(existing.name ? {} : { name }) }, now))!;
    return { user, tokenId: state.row.id, existing: true };
  }
  const user = yield* createCheckedUser(tx, { email, name, isAdmin: true }, now);
  return { user, tokenId: state.row.id, existing: false };
}

/** How long a setup link works: long enough to read the console, find a browser and type a name. */
export const SETUP_LINK_TTL_MS = 60 * 60_000;

/** The setup page; the token rides in the fragment, which browsers never send (no proxy or access log sees it). */
export const SETUP_PATH = '/setup';
export const setupUrl = (base: string, token: string) => `${base}${SETUP_PATH}#token=${token}`;

/**
 * A new setup link while the server has no admin (`parley serve` at each start, `parley
 * setup-link`), else undefined. Earlier links stay good until they expire: on PostgreSQL every
 * instance prints its own at start, and each must keep working.
 */
export function* openSetupLink(tx: Tx, ttlMs: number, now: number): Work<{ token: string; expiresAt: number } | undefined> {
  if (yield* hasAdmin(tx)) return undefined;
  const { token, row } = yield* createSetupToken(tx, ttlMs, now);
  return { token, expiresAt: row.expiresAt };
}
