import { and, asc, eq, sql } from 'drizzle-orm';
import { writeTx, type Db } from '../db/connection';
import { widgetThreadMessages, widgetThreads, type WidgetThread, type WidgetThreadMessage } from '../db/schema';
import { newId } from '../ids';

/**
 * The user's active thread for a widget, created when there is none. Insert-or-ignore first,
 * then read: the partial unique index on (widget_id, user_id) WHERE status = 'active' decides
 * which insert wins, so racing callers (or processes) can never make two active threads.
 */
export function getOrCreateActiveThread(db: Db, widgetId: string, userId: string, now = Date.now(), attempt = 0): { thread: WidgetThread; created: boolean } {
  const inserted = db
    .insert(widgetThreads)
    .values({ id: newId(), widgetId, userId, status: 'active', createdAt: now, updatedAt: now })
    .onConflictDoNothing()
    .returning()
    .get();
  if (inserted) return { thread: inserted, created: true };
  const existing = db
    .select()
    .from(widgetThreads)
    .where(and(eq(widgetThreads.widgetId, widgetId), eq(widgetThreads.userId, userId), eq(widgetThreads.status, 'active')))
    .get();
  // The conflicting row exists unless it was archived between the two statements; try again then.
  if (!existing) {
    if (attempt >= 3) throw new Error(`no active widget thread after ${attempt + 1} attempts`);
    return getOrCreateActiveThread(db, widgetId, userId, now, attempt + 1);
  }
  return { thread: existing, created: false };
}

export const findThreadById = (db: Db, id: string): WidgetThread | undefined =>
  db.select().from(widgetThreads).where(eq(widgetThreads.id, id)).get();

export const listThreadMessages = (db: Db, threadId: string): WidgetThreadMessage[] =>
  db.select().from(widgetThreadMessages).where(eq(widgetThreadMessages.threadId, threadId)).orderBy(asc(widgetThreadMessages.seq)).all();

/** Append a message; the write lock makes `seq` gap-free and unique under concurrent appends. */
export function addThreadMessage(db: Db, threadId: string, data: Record<string, unknown>, now = Date.now()): WidgetThreadMessage {
  return writeTx(db, (tx) => {
    const { next } = tx
      .select({ next: sql<number>`coalesce(max(${widgetThreadMessages.seq}), -1) + 1` })
      .from(widgetThreadMessages)
      .where(eq(widgetThreadMessages.threadId, threadId))
      .get()!;
    const row = tx.insert(widgetThreadMessages).values({ id: newId(), threadId, seq: next, data, createdAt: now }).returning().get();
    tx.update(widgetThreads).set({ updatedAt: now }).where(eq(widgetThreads.id, threadId)).run();
    return row;
  });
}

/** Retire an active thread; the next getOrCreateActiveThread starts a fresh one. Idempotent. */
export function archiveThread(db: Db, threadId: string, now = Date.now()): boolean {
  return (
    db
      .update(widgetThreads)
      .set({ status: 'archived', updatedAt: now })
      .where(and(eq(widgetThreads.id, threadId), eq(widgetThreads.status, 'active')))
      .returning({ id: widgetThreads.id })
      .get() !== undefined
  );
}
