import { and, eq, gt, isNull, lt, or } from 'drizzle-orm';
import type { SetupToken } from '../db/schema';
import { allRows, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';
import { hashSecret, newSetupToken } from '../auth/tokens';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/** What a setup link's token is worth right now: the row, or why it cannot be used. */
export type SetupTokenState = { ok: true; row: SetupToken } | { ok: false; reason: 'unknown' | 'used' | 'expired' };

export function* createSetupToken({ db, t }: Tx, ttlMs: number, now: number): Work<{ row: SetupToken; token: string }> {
  const token = newSetupToken();
  const row = yield* getRow(db.insert(t.setupTokens).values({ id: newId(), hash: hashSecret(token), createdAt: now, expiresAt: now + ttlMs }).returning());
  return { row: row!, token };
}

/** Look, without using the token up (the page that asks for the admin's name and e-mail). */
export function* peekSetupToken({ db, t }: Tx, token: string, now: number): Work<SetupTokenState> {
  const row = yield* getRow(db.select().from(t.setupTokens).where(eq(t.setupTokens.hash, hashSecret(token))));
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.usedAt != null) return { ok: false, reason: 'used' };
  if (row.expiresAt <= now) return { ok: false, reason: 'expired' };
  return { ok: true, row };
}

/**
 * Use the token up: one conditional UPDATE, so of two uses racing each other (two tabs, two
 * instances) only the one whose write lands first gets it; the other sees it used.
 */
export function* useSetupToken(tx: Tx, token: string, now: number): Work<SetupTokenState> {
  const { db, t } = tx;
  const won = yield* getRow(
    db
      .update(t.setupTokens)
      .set({ usedAt: now })
      .where(and(eq(t.setupTokens.hash, hashSecret(token)), isNull(t.setupTokens.usedAt), gt(t.setupTokens.expiresAt, now)))
      .returning(),
  );
  return won ? { ok: true, row: won } : yield* peekSetupToken(tx, token, now);
}

/** Tokens used or expired before `before`: nothing can be done with them any more. */
export function* pruneSetupTokens({ db, t }: Tx, before: number): Work<number> {
  return (yield* allRows(db.delete(t.setupTokens).where(or(lt(t.setupTokens.usedAt, before), lt(t.setupTokens.expiresAt, before))).returning({ id: t.setupTokens.id })))
    .length;
}
