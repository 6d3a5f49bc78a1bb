import { and, eq, gt, isNull, lt, or } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { loginLinks, type LoginLink } from '../db/schema';
import { newId } from '../ids';
import { hashSecret, newLoginLinkToken } from './tokens';

/** What a link's token is worth right now: the link, or why it cannot sign anyone in. */
export type LoginLinkState = { ok: true; link: LoginLink } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

export function createLoginLink(db: Db, userId: string, ttlMs: number, now = Date.now()): { row: LoginLink; token: string } {
  const token = newLoginLinkToken();
  const row = db
    .insert(loginLinks)
    .values({ id: newId(), userId, hash: hashSecret(token), createdAt: now, expiresAt: now + ttlMs })
    .returning()
    .get();
  return { row, token };
}

function stateOf(row: LoginLink | undefined, now: number): LoginLinkState {
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.usedAt != null) return { ok: false, reason: 'used' };
  if (row.expiresAt <= now) return { ok: false, reason: 'expired' };
  return { ok: true, link: row };
}

/** Look, without using the link up (the page that asks for the click). */
export function peekLoginLink(db: Db, token: string, now = Date.now()): LoginLinkState {
  return stateOf(db.select().from(loginLinks).where(eq(loginLinks.hash, hashSecret(token))).get(), now);
}

/**
 * Use the link up. One conditional UPDATE, so two redemptions racing each other cannot both
 * win: the one whose write lands first gets the link, the other sees it used.
 */
export function redeemLoginLink(db: Db, token: string, now = Date.now()): LoginLinkState {
  const hash = hashSecret(token);
  const won = db
    .update(loginLinks)
    .set({ usedAt: now })
    .where(and(eq(loginLinks.hash, hash), isNull(loginLinks.usedAt), gt(loginLinks.expiresAt, now)))
    .returning()
    .get();
  return won ? { ok: true, link: won } : peekLoginLink(db, token, now);
}

/** Links used or expired before `before`: nothing can be done with them any more. */
export function pruneLoginLinks(db: Db, before: number): number {
  return db
    .delete(loginLinks)
    .where(or(lt(loginLinks.usedAt, before), lt(loginLinks.expiresAt, before)))
    .returning({ id: loginLinks.id })
    .all().length;
}
