import { and, desc, eq, inArray } from 'drizzle-orm';
import type { PushToken } from '../db/schema';
import { allRows, getRow, type Tx, type Work } from '../db/work';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

export const PUSH_PLATFORMS = ['ios', 'android', 'web'] as const;
export type PushPlatform = (typeof PUSH_PLATFORMS)[number];

/** The credential a token was registered with: a session (an app on the device) or an API key. */
export type PushTokenHolder = { sessionId?: string; apiKeyId?: string };

export function* findPushToken({ db, t }: Tx, token: string): Work<PushToken | undefined> {
  return yield* getRow(db.select().from(t.pushTokens).where(eq(t.pushTokens.token, token)));
}

/**
 * Save a device's token for a user and the credential that registered it, replacing whatever the
 * row said. Whether another user's token may be taken is decided by the caller (push-token-holder.ts).
 */
export function* registerPushToken({ db, t }: Tx, userId: string, token: string, platform: PushPlatform, now: number, holder: PushTokenHolder = {}): Work<PushToken> {
  const by = { sessionId: holder.sessionId ?? null, apiKeyId: holder.apiKeyId ?? null };
  return (yield* getRow(
    db
      .insert(t.pushTokens)
      .values({ token, userId, platform, createdAt: now, updatedAt: now, ...by })
      .onConflictDoUpdate({ target: t.pushTokens.token, set: { userId, platform, updatedAt: now, ...by } })
      .returning(),
  ))!;
}

/**
 * Keep the user's `keep` most recently registered tokens and drop the others (their cap:
 * PARLEY_PUSH_TOKENS_MAX_PER_USER). A device that registers again moves to the front, so the ones
 * dropped are those of installs long gone.
 */
export function* trimPushTokens({ db, t }: Tx, userId: string, keep: number): Work<number> {
  const p = t.pushTokens;
  const stale = yield* allRows(db.select({ token: p.token }).from(p).where(eq(p.userId, userId)).orderBy(desc(p.updatedAt), desc(p.token)).limit(1_000_000).offset(keep));
  if (!stale.length) return 0;
  return (yield* allRows(db.delete(p).where(and(eq(p.userId, userId), inArray(p.token, stale.map((s) => s.token)))).returning({ t: p.token }))).length;
}

/** Remove the token if it is the user's. */
export function* unregisterPushToken({ db, t }: Tx, userId: string, token: string): Work<boolean> {
  return (yield* allRows(db.delete(t.pushTokens).where(and(eq(t.pushTokens.token, token), eq(t.pushTokens.userId, userId))).returning({ t: t.pushTokens.token }))).length > 0;
}

export function* listPushTokenRows({ db, t }: Tx, userId: string): Work<PushToken[]> {
  return yield* allRows(db.select().from(t.pushTokens).where(eq(t.pushTokens.userId, userId)).orderBy(t.pushTokens.createdAt));
}

export function* listPushTokens(tx: Tx, userId: string): Work<string[]> {
  return (yield* listPushTokenRows(tx, userId)).map((r) => r.token);
}

/** Forget tokens the push service reported as no longer registered. */
export function* removePushTokens({ db, t }: Tx, tokens: string[]): Work<number> {
  if (!tokens.length) return 0;
  return (yield* allRows(db.delete(t.pushTokens).where(inArray(t.pushTokens.token, tokens)).returning({ t: t.pushTokens.token }))).length;
}

/**
 * An Expo push token, as a JSON Schema pattern for the input schema (so /api/openapi.json says
 * it): the same test as the SDK's `Expo.isExpoPushToken` (`ExponentPushToken[…]`,
 * `ExpoPushToken[…]` or a UUID-shaped id, any case), which cannot run here: the SDK is loaded
 * lazily (expo-client.ts).
 */
export const EXPO_PUSH_TOKEN_PATTERN = '^(?:Expo(?:nent)?PushToken\\[[\\s\\S]*\\]|[a-zA-Z\\d]{8}-[a-zA-Z\\d]{4}-[a-zA-Z\\d]{4}-[a-zA-Z\\d]{4}-[a-zA-Z\\d]{12})$';
