import { and, desc, eq, sql } from 'drizzle-orm';
import type { Memory } from '../db/schema';
import { allRows, getRow, serializeOn, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/** One user's memories, the most recently updated first (the order the prompt gives them in). */
export function* listMemories({ db, t }: Tx, userId: string): Work<Memory[]> {
  return yield* allRows(db.select().from(t.memories).where(eq(t.memories.userId, userId)).orderBy(desc(t.memories.updatedAt), desc(t.memories.id)));
}

export function* findMemoryById({ db, t }: Tx, id: string): Work<Memory | undefined> {
  return yield* getRow(db.select().from(t.memories).where(eq(t.memories.id, id)));
}

export type AddResult = { ok: true; memory: Memory } | { ok: false; reason: 'full' };

/**
 * A new memory, unless the user already keeps `max` (run with `store.write`). With an `origin`
 * (the tool call that saves it) this is idempotent: the same call run again after a restart gets
 * the memory it saved the first time. Additions of one user queue behind each other (on
 * PostgreSQL; SQLite's one writer does that already), so two at once cannot both pass the cap.
 */
export function* addMemory(tx: Tx, input: { userId: string; content: string; origin?: string; max: number }, now: number): Work<AddResult> {
  const { db, t } = tx;
  yield* serializeOn(tx, `memories:${input.userId}`);
  if (input.origin) {
    const saved = yield* getRow(db.select().from(t.memories).where(eq(t.memories.origin, input.origin)));
    if (saved) return { ok: true, memory: saved };
  }
  const held = (yield* getRow(db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(t.memories).where(eq(t.memories.userId, input.userId))))!.n;
  if (held >= input.max) return { ok: false, reason: 'full' };
  const memory = yield* getRow(
    db
      .insert(t.memories)
      .values({ id: newId(), userId: input.userId, content: input.content, origin: input.origin ?? null, createdAt: now, updatedAt: now })
      .returning(),
  );
  return { ok: true, memory: memory! };
}

/** The memory with its new content, or undefined when `userId` has none of that id. */
export function* updateMemory({ db, t }: Tx, userId: string, id: string, content: string, now: number): Work<Memory | undefined> {
  return yield* getRow(
    db
      .update(t.memories)
      .set({ content, updatedAt: now })
      .where(and(eq(t.memories.id, id), eq(t.memories.userId, userId)))
      .returning(),
  );
}

/** The memory that was deleted, or undefined when `userId` had none of that id. */
export function* deleteMemory({ db, t }: Tx, userId: string, id: string): Work<Memory | undefined> {
  return yield* getRow(db.delete(t.memories).where(and(eq(t.memories.id, id), eq(t.memories.userId, userId))).returning());
}

/** Every memory of one user; how many there were. */
export function* deleteAllMemories({ db, t }: Tx, userId: string): Work<number> {
  return (yield* allRows(db.delete(t.memories).where(eq(t.memories.userId, userId)).returning({ id: t.memories.id }))).length;
}
