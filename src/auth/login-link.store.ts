import { and, eq, gt, isNull, lt, or } from 'drizzle-orm';
import type { LoginLink } from '../db/schema';
import { allRows, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';
import { hashSecret, newLoginLinkToken } from './tokens';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/** What a link's token is worth right now: the link, or why it cannot sign anyone in. */
export type LoginLinkState = { ok: true; link: LoginLink } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

export function* createLoginLink({ db, t }: Tx, userId: string, ttlMs: number, now: number): Work<{ row: LoginLink; token: string }> {
  const token = newLoginLinkToken();
  const row = yield* getRow(db.insert(t.loginLinks).values({ id: newId(), userId, hash: hashSecret(token), createdAt: now, expiresAt: now + ttlMs }).returning());
  return { row: row!, token };
}

function stateOf(row: LoginLink | undefined, now: number): LoginLinkState {
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.usedAt != null) return { ok: false, reason: 'used' };
  if (row.expiresAt <= now) return { ok: false, reason: 'expired' };
  return { ok: true, link: row };
}

/** Look, without using the link up (the page that asks for the click). */
export function* peekLoginLink({ db, t }: Tx, token: string, now: number): Work<LoginLinkState> {
  return stateOf(yield* getRow(db.select().from(t.loginLinks).where(eq(t.loginLinks.hash, hashSecret(token)))), now);
}

/**
 * Use the link up. One conditional UPDATE, so two redemptions racing each other cannot both
 * win: the one whose write lands first gets the link, the other sees it used.
 */
export function* redeemLoginLink(tx: Tx, token: string, now: number): Work<LoginLinkState> {
  const { db, t } = tx;
  const hash = hashSecret(token);
  const won = yield* getRow(
    db
      .update(t.loginLinks)
      .set({ usedAt: now })
      .where(and(eq(t.loginLinks.hash, hash), isNull(t.loginLinks.usedAt), gt(t.loginLinks.expiresAt, now)))
      .returning(),
  );
  return won ? { ok: true, link: won } : yield* peekLoginLink(tx, token, now);
}

/** Links used or expired before `before`: nothing can be done with them any more. */
export function* pruneLoginLinks({ db, t }: Tx, before: number): Work<number> {
  return (yield* allRows(db.delete(t.loginLinks).where(or(lt(t.loginLinks.usedAt, before), lt(t.loginLinks.expiresAt, before))).returning({ id: t.loginLinks.id })))
    .length;
}
