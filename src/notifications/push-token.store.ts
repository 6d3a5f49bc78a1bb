import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { pushTokens, type PushToken } from '../db/schema';

export const PUSH_PLATFORMS = ['ios', 'android', 'web'] as const;
export type PushPlatform = (typeof PUSH_PLATFORMS)[number];

/** The credential a token was registered with: a session (an app on the device) or an API key. */
export type PushTokenHolder = { sessionId?: string; apiKeyId?: string };

export const findPushToken = (db: Db, token: string): PushToken | undefined => db.select().from(pushTokens).where(eq(pushTokens.token, token)).get();

/**
 * Save a device's token for a user and the credential that registered it, replacing whatever the
 * row said. Whether another user's token may be taken is decided by the caller (push-token-holder.ts).
 */
export function registerPushToken(db: Db, userId: string, token: string, platform: PushPlatform, now = Date.now(), holder: PushTokenHolder = {}): PushToken {
  const by = { sessionId: holder.sessionId ?? null, apiKeyId: holder.apiKeyId ?? null };
  return db
    .insert(pushTokens)
    .values({ token, userId, platform, createdAt: now, updatedAt: now, ...by })
    .onConflictDoUpdate({ target: pushTokens.token, set: { userId, platform, updatedAt: now, ...by } })
    .returning()
    .get();
}

/** Remove the token if it is the user's. */
export function unregisterPushToken(db: Db, userId: string, token: string): boolean {
  return db.delete(pushTokens).where(and(eq(pushTokens.token, token), eq(pushTokens.userId, userId))).returning({ t: pushTokens.token }).all().length > 0;
}

export const listPushTokenRows = (db: Db, userId: string): PushToken[] =>
  db.select().from(pushTokens).where(eq(pushTokens.userId, userId)).orderBy(pushTokens.createdAt).all();

export const listPushTokens = (db: Db, userId: string): string[] => listPushTokenRows(db, userId).map((r) => r.token);

/** Forget tokens the push service reported as no longer registered. */
export function removePushTokens(db: Db, tokens: string[]): number {
  if (!tokens.length) return 0;
  return db.delete(pushTokens).where(inArray(pushTokens.token, tokens)).returning({ t: pushTokens.token }).all().length;
}

/**
 * An Expo push token, as a JSON Schema pattern for the input schema (so /api/openapi.json says
 * it): the same test as the SDK's `Expo.isExpoPushToken` (`ExponentPushToken[…]`,
 * `ExpoPushToken[…]` or a UUID-shaped id, any case), which cannot run here: the SDK is loaded
 * lazily (expo-client.ts).
 */
export const EXPO_PUSH_TOKEN_PATTERN = '^(?:Expo(?:nent)?PushToken\\[[\\s\\S]*\\]|[a-zA-Z\\d]{8}-[a-zA-Z\\d]{4}-[a-zA-Z\\d]{4}-[a-zA-Z\\d]{4}-[a-zA-Z\\d]{12})$';
