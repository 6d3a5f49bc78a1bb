import type { Config } from '../config';
import type { Store } from '../db/work';
import type { User } from '../db/schema';
import { createUser, findUserByEmail, normaliseEmail } from '../account/account.store';

export type SignupRefusal = 'signup_closed' | 'signup_not_allowed';

/**
 * May a first sign-in with this (verified) e-mail create a user? Closed sign-up admits nobody new;
 * open sign-up admits everyone, or only the listed e-mails and `@domains` when the list is set.
 */
export function signupRefusal(config: Pick<Config, 'signup' | 'signupAllow'>, email: string): SignupRefusal | undefined {
  if (config.signup === 'closed') return 'signup_closed';
  if (config.signupAllow.length === 0) return undefined;
  const e = normaliseEmail(email);
  const domain = e.slice(e.lastIndexOf('@') + 1);
  const allowed = config.signupAllow.some((entry) => (entry.includes('@') && !entry.startsWith('@') ? entry === e : entry.replace(/^@/, '') === domain));
  return allowed ? undefined : 'signup_not_allowed';
}

/** The user with this e-mail, created on first sign-in when the sign-up policy allows. */
export async function findOrCreateUser(
  store: Store,
  config: Pick<Config, 'signup' | 'signupAllow'>,
  profile: { email: string; name: string; image: string },
  now: number,
): Promise<{ user: User } | { refusal: SignupRefusal }> {
  const existing = await store.read((tx) => findUserByEmail(tx, profile.email));
  if (existing) return { user: existing };
  const refusal = signupRefusal(config, profile.email);
  if (refusal) return { refusal };
  try {
    return { user: await store.write((tx) => createUser(tx, { email: profile.email, name: profile.name.slice(0, 200), image: profile.image.slice(0, 2000) }, now)) };
  } catch (err) {
    // Two first sign-ins racing: the loser finds the winner's row.
    const raced = await store.read((tx) => findUserByEmail(tx, profile.email));
    if (raced) return { user: raced };
    throw err;
  }
}
