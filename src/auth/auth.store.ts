import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { forgetCredentials } from './credential-cache';
import { preparedFor } from '../db/prepared';
import { apiKeys, sessions, type ApiKey, type Session } from '../db/schema';
import { newId } from '../ids';
import { hashSecret, newApiKey, newSessionToken, visiblePrefix } from './tokens';

export function createApiKey(db: Db, userId: string, name: string, now = Date.now()): { row: ApiKey; key: string } {
  const key = newApiKey();
  const row = db
    .insert(apiKeys)
    .values({ id: newId(), userId, name, prefix: visiblePrefix(key), hash: hashSecret(key), createdAt: now })
    .returning()
    .get();
  return { row, key };
}

// Every request authenticates: these two lookups are prepared once (src/db/prepared.ts).
const apiKeyByHash = preparedFor((db) => db.select().from(apiKeys).where(eq(apiKeys.hash, sql.placeholder('hash'))).prepare());
const sessionByHash = preparedFor((db) => db.select().from(sessions).where(eq(sessions.hash, sql.placeholder('hash'))).prepare());

export const findApiKeyByHash = (db: Db, hash: string): ApiKey | undefined => apiKeyByHash(db).get({ hash });

export const findApiKeyById = (db: Db, id: string): ApiKey | undefined =>
  db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();

export const listApiKeys = (db: Db, userId: string): ApiKey[] =>
  db.select().from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(desc(apiKeys.createdAt)).all();

export function touchApiKey(db: Db, id: string, now = Date.now()): void {
  db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, id)).run();
}

/** Revoke a key if it belongs to `userId` (or to anyone when userId is undefined). Idempotent. */
export function revokeApiKey(db: Db, id: string, userId?: string, now = Date.now()): ApiKey | undefined {
  const owned = userId === undefined ? eq(apiKeys.id, id) : and(eq(apiKeys.id, id), eq(apiKeys.userId, userId));
  const row = db.select().from(apiKeys).where(owned).get();
  if (!row) return undefined;
  if (row.revokedAt == null) {
    db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, id)).run();
    forgetCredentials(row.userId);
  }
  return { ...row, revokedAt: row.revokedAt ?? now };
}

export function createSession(
  db: Db,
  userId: string,
  ttlMs: number,
  opts: { userAgent?: string } = {},
  now = Date.now(),
): { row: Session; token: string } {
  const token = newSessionToken();
  const row = db
    .insert(sessions)
    .values({
      id: newId(),
      userId,
      hash: hashSecret(token),
      createdAt: now,
      lastUsedAt: now,
      expiresAt: now + ttlMs,
      userAgent: opts.userAgent ?? null,
    })
    .returning()
    .get();
  return { row, token };
}

export const findSessionByHash = (db: Db, hash: string): Session | undefined => sessionByHash(db).get({ hash });

export const findSessionById = (db: Db, id: string): Session | undefined =>
  db.select().from(sessions).where(eq(sessions.id, id)).get();

export const listActiveSessions = (db: Db, userId: string, now = Date.now()): Session[] =>
  db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.lastUsedAt))
    .all();

/** Sliding expiry: a used session lives `ttlMs` from its last use. */
export function touchSession(db: Db, id: string, ttlMs: number, now = Date.now()): void {
  db.update(sessions).set({ lastUsedAt: now, expiresAt: now + ttlMs }).where(eq(sessions.id, id)).run();
}

export function revokeSession(db: Db, id: string, now = Date.now()): boolean {
  const rows = db
    .update(sessions)
    .set({ revokedAt: now })
    .where(and(eq(sessions.id, id), isNull(sessions.revokedAt)))
    .returning({ userId: sessions.userId })
    .all();
  for (const r of rows) forgetCredentials(r.userId);
  return rows.length > 0;
}

/**
 * Delete the sessions that ended (expired, or revoked by a sign-out) before `before`: no
 * request can use them and `auth/listSessions` no longer shows them, and every sign-in adds one.
 */
export function pruneEndedSessions(db: Db, before: number): number {
  return db.$client.run('DELETE FROM sessions WHERE expires_at < ?1 OR revoked_at < ?1', [before]).changes;
}
