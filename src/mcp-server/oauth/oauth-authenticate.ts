import type { AppDeps } from '../../deps';
import type { User } from '../../db/schema';
import { hashSecret } from '../../auth/tokens';
import { findUser } from '../../account/account.store';
import { findToken, touchGrant } from './oauth.store';

/** Last-used stamps of a grant move at most this often, so most requests only read. */
const TOUCH_EVERY_MS = 60_000;

/**
 * The user an OAuth access token acts for, read from the database at every request (no cache:
 * a grant revoked in Settings or by the client stops working at the next request, on every
 * instance). Undefined for a token unknown, expired, revoked, or whose user is gone.
 */
export async function authenticateOAuthAccess(deps: AppDeps, token: string, now: number): Promise<{ user: User; expiresAt: number; clientId: string; scopes: string[] } | undefined> {
  const found = await deps.store.read((tx) => findToken(tx, hashSecret(token), now));
  if (!found || found.kind !== 'access') return undefined;
  const user = await deps.store.read((tx) => findUser(tx, found.grant.userId));
  if (!user) return undefined;
  if (found.grant.lastUsedAt == null || now - found.grant.lastUsedAt > TOUCH_EVERY_MS) await deps.store.write((tx) => touchGrant(tx, found.grant.id, now));
  return { user, expiresAt: found.expiresAt, clientId: found.grant.clientId, scopes: found.grant.scope.split(' ').filter(Boolean) };
}
