import { eq } from 'drizzle-orm';
import type { Assistant } from '../db/schema';
import { exec, getRow, type Tx, type Work } from '../db/work';

// Units of work (src/db/work.ts) for assistants' avatars (docs/assistants.md, "Avatar").

/** Store the avatar (base64 WebP) and name its version on the assistant, so its address changes with it. */
export function* saveAvatar({ db, t }: Tx, assistantId: string, webp: string, version: string, now: number): Work<Assistant> {
  yield* exec(
    db
      .insert(t.assistantAvatars)
      .values({ assistantId, webp, updatedAt: now })
      .onConflictDoUpdate({ target: t.assistantAvatars.assistantId, set: { webp, updatedAt: now } }),
  );
  const row = yield* getRow(db.update(t.assistants).set({ avatarVersion: version, updatedAt: now }).where(eq(t.assistants.id, assistantId)).returning());
  return row!;
}

export function* deleteAvatar({ db, t }: Tx, assistantId: string, now: number): Work<Assistant> {
  yield* exec(db.delete(t.assistantAvatars).where(eq(t.assistantAvatars.assistantId, assistantId)));
  const row = yield* getRow(db.update(t.assistants).set({ avatarVersion: null, updatedAt: now }).where(eq(t.assistants.id, assistantId)).returning());
  return row!;
}

/** The avatar's base64 WebP, if it has one. */
export function* findAvatar({ db, t }: Tx, assistantId: string): Work<string | undefined> {
  const row = yield* getRow(db.select({ webp: t.assistantAvatars.webp }).from(t.assistantAvatars).where(eq(t.assistantAvatars.assistantId, assistantId)));
  return row?.webp;
}
