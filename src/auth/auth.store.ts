import { and, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import { forgetCredentials } from './credential-cache';
import { preparedFor } from '../db/prepared';
import { apiKeys, sessions, type ApiKey, type Session } from '../db/schema';
import { afterCommit, allRows, countRows, exec, getRow, hotOr, type Tx, type Work } from '../db/work';
import { newId } from '../ids';
import { hashSecret, newApiKey, newSessionToken, visiblePrefix } from './tokens';

// Units of work (src/db/work.ts), run by `deps.store` on SQLite or PostgreSQL alike. Every
// request that misses the credential cache (src/auth/credential-cache.ts) runs the lookups by hash:
// on SQLite they are statements prepared once (`hotOr`).

export function* createApiKey({ db, t }: Tx, userId: string, name: string, now: number): Work<{ row: ApiKey; key: string }> {
  const key = newApiKey();
  const row = yield* getRow(db.insert(t.apiKeys).values({ id: newId(), userId, name, prefix: visiblePrefix(key), hash: hashSecret(key), createdAt: now }).returning());
  return { row: row!, key };
}

// Every request authenticates: on SQLite these two lookups are prepared once (src/db/prepared.ts).
const apiKeyByHash = preparedFor((db) => db.select().from(apiKeys).where(eq(apiKeys.hash, sql.placeholder('hash'))).prepare());
const sessionByHash = preparedFor((db) => db.select().from(sessions).where(eq(sessions.hash, sql.placeholder('hash'))).prepare());

/** Per request (authentication). */
export function* findApiKeyByHash(tx: Tx, hash: string): Work<ApiKey | undefined> {
  return yield* hotOr(
    tx,
    (db) => apiKeyByHash(db).get({ hash }),
    () => getRow(tx.db.select().from(tx.t.apiKeys).where(eq(tx.t.apiKeys.hash, hash))),
  );
}

/** A user's API keys that are not revoked (their cap: PARLEY_API_KEYS_MAX_PER_USER). */
export const countActiveApiKeys = (tx: Tx, userId: string) => countRows(tx, tx.t.apiKeys, and(eq(tx.t.apiKeys.userId, userId), isNull(tx.t.apiKeys.revokedAt)));

export function* findApiKeyById({ db, t }: Tx, id: string): Work<ApiKey | undefined> {
  return yield* getRow(db.select().from(t.apiKeys).where(eq(t.apiKeys.id, id)));
}

export function* listApiKeys({ db, t }: Tx, userId: string): Work<ApiKey[]> {
  return yield* allRows(db.select().from(t.apiKeys).where(eq(t.apiKeys.userId, userId)).orderBy(desc(t.apiKeys.createdAt)));
}

/** Per request, at most once a minute per key (authentication). */
export function* touchApiKey({ db, t }: Tx, id: string, now: number): Work<void> {
  yield* exec(db.update(t.apiKeys).set({ lastUsedAt: now }).where(eq(t.apiKeys.id, id)));
}

/**
 * Revoke a key if it belongs to `userId` (or to anyone when userId is undefined). Idempotent. The
 * credential cache forgets the user once the revocation has committed, so the open streams'
 * check (src/auth/credential-watch.ts) sees the key revoked.
 */
export function* revokeApiKey({ db, t }: Tx, id: string, userId: string | undefined, now: number): Work<ApiKey | undefined> {
  const owned = userId === undefined ? eq(t.apiKeys.id, id) : and(eq(t.apiKeys.id, id), eq(t.apiKeys.userId, userId));
  const row = yield* getRow(db.select().from(t.apiKeys).where(owned));
  if (!row) return undefined;
  if (row.revokedAt == null) {
    yield* exec(db.update(t.apiKeys).set({ revokedAt: now }).where(eq(t.apiKeys.id, id)));
    yield* afterCommit(() => forgetCredentials(row.userId));
  }
  return { ...row, revokedAt: row.revokedAt ?? now };
}

export function* createSession({ db, t }: Tx, userId: string, ttlMs: number, opts: { userAgent?: string }, now: number): Work<{ row: Session; token: string }> {
  const token = newSessionToken();
  const row = yield* getRow(
    db
      .insert(t.sessions)
      .values({ id: newId(), userId, hash: hashSecret(token), createdAt: now, lastUsedAt: now, expiresAt: now + ttlMs, userAgent: opts.userAgent ?? null })
      .returning(),
  );
  return { row: row!, token };
}

/** Per request (authentication). */
export function* findSessionByHash(tx: Tx, hash: string): Work<Session | undefined> {
  return yield* hotOr(
    tx,
    (db) => sessionByHash(db).get({ hash }),
    () => getRow(tx.db.select().from(tx.t.sessions).where(eq(tx.t.sessions.hash, hash))),
  );
}

export function* findSessionById({ db, t }: Tx, id: string): Work<Session | undefined> {
  return yield* getRow(db.select().from(t.sessions).where(eq(t.sessions.id, id)));
}

export function* listActiveSessions({ db, t }: Tx, userId: string, now: number): Work<Session[]> {
  return yield* allRows(
    db
      .select()
      .from(t.sessions)
      .where(and(eq(t.sessions.userId, userId), isNull(t.sessions.revokedAt), gt(t.sessions.expiresAt, now)))
      .orderBy(desc(t.sessions.lastUsedAt)),
  );
}

/** Sliding expiry: a used session lives `ttlMs` from its last use. Per request, at most once a minute per session (authentication). */
export function* touchSession({ db, t }: Tx, id: string, ttlMs: number, now: number): Work<void> {
  yield* exec(db.update(t.sessions).set({ lastUsedAt: now, expiresAt: now + ttlMs }).where(eq(t.sessions.id, id)));
}

/** Sign a session out. Idempotent; the credential cache forgets its user after the commit. */
export function* revokeSession({ db, t }: Tx, id: string, now: number): Work<boolean> {
  const rows = yield* allRows(
    db
      .update(t.sessions)
      .set({ revokedAt: now })
      .where(and(eq(t.sessions.id, id), isNull(t.sessions.revokedAt)))
      .returning({ userId: t.sessions.userId }),
  );
  for (const r of rows) yield* afterCommit(() => forgetCredentials(r.userId));
  return rows.length > 0;
}

/**
 * Delete the sessions that ended (expired, or revoked by a sign-out) before `before`: no
 * request can use them and `auth/listSessions` no longer shows them, and every sign-in adds one.
 */
export function* pruneEndedSessions({ db, t }: Tx, before: number): Work<number> {
  return (yield* allRows(db.delete(t.sessions).where(or(lt(t.sessions.expiresAt, before), lt(t.sessions.revokedAt, before))).returning({ id: t.sessions.id }))).length;
}
