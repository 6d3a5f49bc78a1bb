import type { Credential } from '../auth/authenticate';
import { findApiKeyById, findSessionById, listActiveSessions, listApiKeys } from '../auth/auth.store';
import { serializeOn, type Tx, type Work } from '../db/work';
import type { PushToken } from '../db/schema';
import { findPushToken, listPushTokenRows, registerPushToken, trimPushTokens, type PushPlatform } from './push-token.store';

/**
 * Who a push token belongs to. A token names one app install on one device, and whoever knows it
 * could register it: a member who saw it in a shared log, a screenshot. So a token is held by the
 * credential that registered it, usually the app's session on that device. While that session is
 * live the device is its user's in Parley's eyes (the device holds that very session), and another
 * user's registration leaves the token where it is. Once the session ended (signed out, revoked,
 * expired) the next user to register the token gets it: the phone that changed hands, or a second
 * person signing in on a shared tablet. Pushes go only to tokens whose holder is live, so a user
 * who signed out on a device stops getting pushes there at once. docs/extras.md.
 */

const holderOf = (c: Credential) => (c.kind === 'session' ? { sessionId: c.sessionId } : { apiKeyId: c.keyId });

/** Is the credential that registered `row` still signed in? */
export function* holderIsLive(tx: Tx, row: PushToken, now: number): Work<boolean> {
  if (row.sessionId) {
    const s = yield* findSessionById(tx, row.sessionId);
    return !!s && s.revokedAt == null && s.expiresAt > now;
  }
  if (row.apiKeyId) {
    const k = yield* findApiKeyById(tx, row.apiKeyId);
    return !!k && k.revokedAt == null;
  }
  // Registered before Parley kept the credential: any live credential of the owner may be it.
  return (yield* listActiveSessions(tx, row.userId, now)).length > 0 || (yield* listApiKeys(tx, row.userId)).some((k) => k.revokedAt == null);
}

/**
 * Register `token` for the caller, unless another user's live credential holds it (run with
 * `store.write`: the check and the write in one transaction), keeping the caller's `keep` most
 * recently registered tokens (PARLEY_PUSH_TOKENS_MAX_PER_USER). Returns whether the caller now
 * holds it; the route answers the same either way, so the answer tells nobody whose token it is.
 */
export function* claimPushToken(tx: Tx, userId: string, credential: Credential, token: string, platform: PushPlatform, now: number, keep: number): Work<boolean> {
  const row = yield* findPushToken(tx, token);
  if (row && row.userId !== userId && (yield* holderIsLive(tx, row, now))) return false;
  // The user's registrations queue here (on PostgreSQL), so those at once cannot each keep `keep`.
  yield* serializeOn(tx, `push-tokens:${userId}`);
  yield* registerPushToken(tx, userId, token, platform, now, holderOf(credential));
  yield* trimPushTokens(tx, userId, keep);
  return true;
}

/** The user's tokens a push may go to: those whose registering credential is still live. */
export function* deliverableTokens(tx: Tx, userId: string, now: number): Work<string[]> {
  const tokens: string[] = [];
  for (const row of yield* listPushTokenRows(tx, userId)) if (yield* holderIsLive(tx, row, now)) tokens.push(row.token);
  return tokens;
}
