import type { Db } from '../db/connection';
import type { User } from '../db/schema';
import { findUserById } from '../account/account.store';
import { findApiKeyByHash, findSessionByHash, touchApiKey, touchSession } from './auth.store';
import { DAY_MS } from '../time';
import { hashSecret, sameHash } from './tokens';
import { cachedCredential, rememberCredential } from './credential-cache';

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

/**
 * Resolve the request's credential: `x-api-key`, then `Authorization: Bearer`, then the session
 * cookie. Returns undefined for a missing, unknown, revoked or expired credential. A credential
 * seen recently is answered from `credential-cache.ts` without touching SQLite.
 */
export function authenticate(db: Db, headers: Headers, sessionTtlDays: number, now = Date.now()): Principal | undefined {
  const apiKey = headers.get('x-api-key');
  if (apiKey) {
    const hash = hashSecret(apiKey.trim());
    // Keyed by kind too: an API key sent as a bearer token must not find the key's entry.
    const hit = cachedCredential(db, `k${hash}`, now);
    if (hit) {
      if (hit.lastUsedAt == null || now - hit.lastUsedAt > TOUCH_EVERY_MS) {
        touchApiKey(db, (hit.principal.credential as { keyId: string }).keyId, now);
        hit.lastUsedAt = now;
      }
      return hit.principal;
    }
    const row = findApiKeyByHash(db, hash);
    if (!row || !sameHash(row.hash, hash) || row.revokedAt != null) return undefined;
    const user = findUserById(db, row.userId);
    if (!user) return undefined;
    let lastUsedAt = row.lastUsedAt;
    if (lastUsedAt == null || now - lastUsedAt > TOUCH_EVERY_MS) {
      touchApiKey(db, row.id, now);
      lastUsedAt = now;
    }
    const principal = freeze({ user, credential: { kind: 'apiKey', keyId: row.id } });
    rememberCredential(db, `k${hash}`, { principal, at: now, expiresAt: Infinity, lastUsedAt });
    return principal;
  }
  const auth = headers.get('authorization');
  const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
  const token = bearer || readCookie(headers.get('cookie'), SESSION_COOKIE);
  if (!token) return undefined;
  const hash = hashSecret(token);
  const ttlMs = sessionTtlDays * DAY_MS;
  const hit = cachedCredential(db, `s${hash}`, now);
  if (hit) {
    if (now - hit.lastUsedAt! > TOUCH_EVERY_MS) {
      touchSession(db, (hit.principal.credential as { sessionId: string }).sessionId, ttlMs, now);
      hit.lastUsedAt = now;
      hit.expiresAt = now + ttlMs;
    }
    return hit.principal;
  }
  const session = findSessionByHash(db, hash);
  if (!session || !sameHash(session.hash, hash) || session.revokedAt != null || session.expiresAt <= now) return undefined;
  const user = findUserById(db, session.userId);
  if (!user) return undefined;
  let { lastUsedAt, expiresAt } = session;
  if (now - lastUsedAt > TOUCH_EVERY_MS) {
    touchSession(db, session.id, ttlMs, now);
    [lastUsedAt, expiresAt] = [now, now + ttlMs];
  }
  const principal = freeze({ user, credential: { kind: 'session', sessionId: session.id } });
  rememberCredential(db, `s${hash}`, { principal, at: now, expiresAt, lastUsedAt });
  return principal;
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
