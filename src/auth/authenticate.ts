import type { User } from '../db/schema';
import type { Store, Tx, Work } from '../db/work';
import { findUserById } from '../account/account.store';
import { findApiKeyByHash, findSessionByHash, touchApiKey, touchSession } from './auth.store';
import { DAY_MS } from '../time';
import { hashSecret, sameHash } from './tokens';
import { cachedCredential, credentialChanges, rememberCredential, type CachedCredential } from './credential-cache';

export const SESSION_COOKIE = 'parley_session';

/** Last-used stamps move at most this often, so reads stay reads. */
const TOUCH_EVERY_MS = 60_000;

export type Credential =
  | { kind: 'session'; sessionId: string }
  | { kind: 'apiKey'; keyId: string };

export interface Principal {
  user: User;
  credential: Credential;
}

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      // A malformed %-escape in someone's cookie is an unknown credential, not a server error.
      try {
        return decodeURIComponent(raw);
      } catch {
        return raw;
      }
    }
  }
  return undefined;
}

/** An authenticated request: who, and the credential as the cache keys it (kind and hash, never the secret). */
export interface Authenticated {
  principal: Principal;
  ref: string;
}

/**
 * Resolve the request's credential: `x-api-key`, then `Authorization: Bearer`, then the session
 * cookie. Resolves to undefined for a missing, unknown, revoked or expired credential. A
 * credential seen recently is answered from `credential-cache.ts` without a database lookup.
 */
export async function authenticate(store: Store, headers: Headers, sessionTtlDays: number, now = Date.now()): Promise<Authenticated | undefined> {
  let kind: 'k' | 's';
  let secret: string | undefined | null = headers.get('x-api-key');
  if (secret) kind = 'k';
  else {
    const auth = headers.get('authorization');
    const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
    secret = bearer || readCookie(headers.get('cookie'), SESSION_COOKIE);
    if (!secret) return undefined;
    kind = 's';
  }
  // Keyed by kind too: an API key sent as a bearer token must not find the key's entry.
  const ref = kind + hashSecret(secret.trim());
  // The cache answers without awaiting anything: most requests pay no database round trip.
  const entry = cachedCredential(store, ref, now) ?? (await lookUp(store, ref, now));
  if (!entry) return undefined;
  const lastUsedAt = entry.lastUsedAt;
  if (lastUsedAt == null || now - lastUsedAt > TOUCH_EVERY_MS) {
    // Claimed before the write is awaited, so the requests arriving meanwhile do not touch it too.
    entry.lastUsedAt = now;
    const credential = entry.principal.credential;
    try {
      if (credential.kind === 'apiKey') await store.read((tx) => touchApiKey(tx, credential.keyId, now));
      else {
        // A session's expiry slides with its use.
        const ttlMs = sessionTtlDays * DAY_MS;
        await store.read((tx) => touchSession(tx, credential.sessionId, ttlMs, now));
        entry.expiresAt = now + ttlMs;
      }
    } catch (err) {
      entry.lastUsedAt = lastUsedAt; // not written: the next request tries again
      throw err;
    }
  }
  return { principal: entry.principal, ref };
}

/**
 * Is the credential a request authenticated with (`Authenticated.ref`) still valid for `userId`:
 * not revoked, its session not expired, its user still there? For what outlives the request: an
 * open event stream (src/auth/credential-watch.ts). Does not count as a use.
 */
export async function credentialStillValid(store: Store, ref: string, userId: string, now = Date.now()): Promise<boolean> {
  const entry = cachedCredential(store, ref, now) ?? (await lookUp(store, ref, now));
  return entry?.principal.user.id === userId;
}

/** The credential resolved from the database (and remembered); undefined when not valid. */
async function lookUp(store: Store, ref: string, now: number): Promise<CachedCredential | undefined> {
  // Counted before the lookup: a change committed while it runs leaves no stale entry behind.
  const seen = credentialChanges();
  const hash = ref.slice(1);
  const entry = await store.read((tx) => (ref[0] === 'k' ? lookUpApiKey(tx, hash, now) : lookUpSession(tx, hash, now)));
  if (entry) rememberCredential(store, ref, entry, seen);
  return entry;
}

function* lookUpApiKey(tx: Tx, hash: string, now: number): Work<CachedCredential | undefined> {
  const row = yield* findApiKeyByHash(tx, hash);
  if (!row || !sameHash(row.hash, hash) || row.revokedAt != null) return undefined;
  const user = yield* findUserById(tx, row.userId);
  if (!user) return undefined;
  const principal = freeze({ user, credential: { kind: 'apiKey', keyId: row.id } });
  return { principal, at: now, expiresAt: Infinity, lastUsedAt: row.lastUsedAt };
}

function* lookUpSession(tx: Tx, hash: string, now: number): Work<CachedCredential | undefined> {
  const session = yield* findSessionByHash(tx, hash);
  if (!session || !sameHash(session.hash, hash) || session.revokedAt != null || session.expiresAt <= now) return undefined;
  const user = yield* findUserById(tx, session.userId);
  if (!user) return undefined;
  const principal = freeze({ user, credential: { kind: 'session', sessionId: session.id } });
  return { principal, at: now, expiresAt: session.expiresAt, lastUsedAt: session.lastUsedAt };
}

/** Cached principals are shared by every request of their credential: nobody may change one in place. */
function freeze(principal: Principal): Principal {
  Object.freeze(principal.user);
  Object.freeze(principal.credential);
  return Object.freeze(principal);
}

/**
 * The cookie outlives any one TTL on purpose: the session slides on the server with every use,
 * and the server alone decides when it has expired. A cookie bound to the first TTL would make
 * the browser drop a session that is still alive. 400 days is the longest browsers keep one.
 */
export const SESSION_COOKIE_MAX_AGE_S = 400 * 86_400;

export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${maxAgeSeconds}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

export const clearedSessionCookie = (secure: boolean) => sessionCookie('', 0, secure);
