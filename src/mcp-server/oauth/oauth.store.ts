import { and, desc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import { allRows, exec, getRow, type Tx, type Work } from '../../db/work';
import type { OAuthClient, OAuthGrant } from '../../db/schema';
import { newId } from '../../ids';

export function* createClient({ db, t }: Tx, row: Omit<OAuthClient, 'id' | 'createdAt'>, now: number): Work<OAuthClient> {
  return (yield* getRow(db.insert(t.oauthClients).values({ id: newId(), ...row, createdAt: now }).returning()))!;
}

/** A client no user has allowed (yet): no grant, in force or ended, names it. */
const neverAllowed = (t: Tx['t']) => sql`NOT EXISTS (SELECT 1 FROM ${t.oauthGrants} WHERE ${t.oauthGrants.clientId} = ${t.oauthClients.id})`;

/** How many registered clients no user has allowed yet (the cap on open registration). */
export function* countPendingClients({ db, t }: Tx): Work<number> {
  return Number((yield* getRow(db.select({ n: sql<number>`count(*)` }).from(t.oauthClients).where(neverAllowed(t))))?.n ?? 0);
}

export function* findClient({ db, t }: Tx, id: string): Work<OAuthClient | undefined> {
  return yield* getRow(db.select().from(t.oauthClients).where(eq(t.oauthClients.id, id)));
}

export interface NewCode {
  hash: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  resource: string | null;
  expiresAt: number;
}

export function* createCode({ db, t }: Tx, code: NewCode): Work<void> {
  yield* exec(db.insert(t.oauthCodes).values(code));
}

/** Use a code: deleted as it is read, so it works once; undefined when unknown or expired. */
export function* takeCode({ db, t }: Tx, hash: string, now: number): Work<NewCode | undefined> {
  const code = yield* getRow(db.delete(t.oauthCodes).where(eq(t.oauthCodes.hash, hash)).returning());
  return code && code.expiresAt > now ? code : undefined;
}

export interface IssuedHashes {
  access: { hash: string; expiresAt: number };
  refresh: { hash: string; expiresAt: number };
}

function* insertTokens({ db, t }: Tx, grantId: string, tokens: IssuedHashes): Work<void> {
  yield* exec(
    db.insert(t.oauthTokens).values([
      { hash: tokens.access.hash, grantId, kind: 'access', expiresAt: tokens.access.expiresAt },
      { hash: tokens.refresh.hash, grantId, kind: 'refresh', expiresAt: tokens.refresh.expiresAt },
    ]),
  );
}

/** A user's consent to a client, with its first tokens. */
export function* createGrant(tx: Tx, input: { clientId: string; userId: string; scope: string }, tokens: IssuedHashes, now: number): Work<OAuthGrant> {
  const grant = (yield* getRow(tx.db.insert(tx.t.oauthGrants).values({ id: newId(), ...input, createdAt: now, lastUsedAt: now }).returning()))!;
  yield* insertTokens(tx, grant.id, tokens);
  return grant;
}

/** Access tokens of one grant alive at once, at most: the newest, and those it replaced shortly before. */
const ACCESS_TOKENS_KEPT = 3;

export type FoundToken = { kind: 'access' | 'refresh'; expiresAt: number; grant: OAuthGrant };

/** A token of a grant not revoked, by its hash; undefined when unknown, expired or revoked. */
export function* findToken({ db, t }: Tx, hash: string, now: number): Work<FoundToken | undefined> {
  const row = yield* getRow(
    db
      .select({ kind: t.oauthTokens.kind, expiresAt: t.oauthTokens.expiresAt, grant: t.oauthGrants })
      .from(t.oauthTokens)
      .innerJoin(t.oauthGrants, eq(t.oauthGrants.id, t.oauthTokens.grantId))
      .where(and(eq(t.oauthTokens.hash, hash), isNull(t.oauthGrants.revokedAt))),
  );
  return row && row.expiresAt > now ? row : undefined;
}

/**
 * Trade a refresh token for new tokens: the old one is deleted as it is used (rotation), so a
 * second use of it (a copy in other hands, or two refreshes racing) finds nothing. Undefined for
 * a refresh token that is unknown, used, expired, or of a revoked grant or another client.
 */
export function* rotateRefresh(tx: Tx, hash: string, clientId: string, tokens: IssuedHashes, now: number): Work<OAuthGrant | undefined> {
  const { db, t } = tx;
  const old = yield* getRow(db.delete(t.oauthTokens).where(and(eq(t.oauthTokens.hash, hash), eq(t.oauthTokens.kind, 'refresh'))).returning());
  if (!old || old.expiresAt <= now) return undefined;
  const grant = yield* getRow(db.select().from(t.oauthGrants).where(eq(t.oauthGrants.id, old.grantId)));
  if (!grant || grant.revokedAt != null || grant.clientId !== clientId) return undefined;
  // Access tokens it replaced keep working until they expire (another process of the client may
  // still hold one), but only the last few: a client refreshing in a loop piles up no rows.
  const older = yield* allRows(
    db
      .select({ hash: t.oauthTokens.hash })
      .from(t.oauthTokens)
      .where(and(eq(t.oauthTokens.grantId, grant.id), eq(t.oauthTokens.kind, 'access')))
      .orderBy(desc(t.oauthTokens.expiresAt))
      .limit(1_000_000)
      .offset(ACCESS_TOKENS_KEPT - 1),
  );
  if (older.length) yield* exec(db.delete(t.oauthTokens).where(inArray(t.oauthTokens.hash, older.map((o) => o.hash))));
  yield* insertTokens(tx, grant.id, tokens);
  yield* exec(db.update(t.oauthGrants).set({ lastUsedAt: now }).where(eq(t.oauthGrants.id, grant.id)));
  return grant;
}

/** Stamp a grant's last use (at most once a minute, by the caller). */
export function* touchGrant({ db, t }: Tx, grantId: string, now: number): Work<void> {
  yield* exec(db.update(t.oauthGrants).set({ lastUsedAt: now }).where(eq(t.oauthGrants.id, grantId)));
}

/** End a grant: its tokens go at once. Undefined when `userId` has no grant of that id. */
export function* revokeGrant({ db, t }: Tx, userId: string, grantId: string, now: number): Work<OAuthGrant | undefined> {
  const grant = yield* getRow(db.update(t.oauthGrants).set({ revokedAt: now }).where(and(eq(t.oauthGrants.id, grantId), eq(t.oauthGrants.userId, userId))).returning());
  if (grant) yield* exec(db.delete(t.oauthTokens).where(eq(t.oauthTokens.grantId, grantId)));
  return grant;
}

/** RFC 7009: the grant of a token, ended (any token of a grant ends all of it). Nothing when unknown. */
export function* revokeByToken(tx: Tx, hash: string, clientId: string, now: number): Work<void> {
  const row = yield* getRow(
    tx.db
      .select({ grant: tx.t.oauthGrants })
      .from(tx.t.oauthTokens)
      .innerJoin(tx.t.oauthGrants, eq(tx.t.oauthGrants.id, tx.t.oauthTokens.grantId))
      .where(eq(tx.t.oauthTokens.hash, hash)),
  );
  // A client may revoke its own tokens only (RFC 7009 §2.1).
  if (row && row.grant.clientId === clientId) yield* revokeGrant(tx, row.grant.userId, row.grant.id, now);
}

export type GrantView = OAuthGrant & { clientName: string; clientUri: string | null };

/** A user's grants still in force, the most recently used first. */
export function* listGrants({ db, t }: Tx, userId: string): Work<GrantView[]> {
  const rows = yield* allRows(
    db
      .select({ grant: t.oauthGrants, clientName: t.oauthClients.name, clientUri: t.oauthClients.clientUri })
      .from(t.oauthGrants)
      .innerJoin(t.oauthClients, eq(t.oauthClients.id, t.oauthGrants.clientId))
      .where(and(eq(t.oauthGrants.userId, userId), isNull(t.oauthGrants.revokedAt)))
      .orderBy(desc(t.oauthGrants.lastUsedAt), desc(t.oauthGrants.id)),
  );
  return rows.map((r) => ({ ...r.grant, clientName: r.clientName, clientUri: r.clientUri }));
}

/**
 * The retention pass's share: expired codes and tokens; grants revoked a month ago; clients that
 * registered a day ago and never got a grant (registration is open to anyone, as MCP clients
 * expect, so unused registrations must not pile up). Returns how many rows went.
 */
export function* pruneOAuth({ db, t }: Tx, now: number, unusedClientMs: number, revokedGrantMs: number): Work<number> {
  let n = 0;
  n += (yield* allRows(db.delete(t.oauthCodes).where(lt(t.oauthCodes.expiresAt, now)).returning({ h: t.oauthCodes.hash }))).length;
  n += (yield* allRows(db.delete(t.oauthTokens).where(lt(t.oauthTokens.expiresAt, now)).returning({ h: t.oauthTokens.hash }))).length;
  n += (yield* allRows(db.delete(t.oauthGrants).where(lt(t.oauthGrants.revokedAt, now - revokedGrantMs)).returning({ id: t.oauthGrants.id }))).length;
  n += (yield* allRows(db.delete(t.oauthClients).where(and(lt(t.oauthClients.createdAt, now - unusedClientMs), neverAllowed(t))).returning({ id: t.oauthClients.id }))).length;
  return n;
}
