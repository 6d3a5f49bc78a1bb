import { and, asc, eq, sql } from 'drizzle-orm';
import type { WidgetThread, WidgetThreadMessage } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/**
 * The user's active thread for a widget, created when there is none. Insert-or-ignore first,
 * then read: the partial unique index on (widget_id, user_id) WHERE status = 'active' decides
 * which insert wins, so racing callers (or processes) can never make two active threads.
 */
export function* getOrCreateActiveThread(tx: Tx, widgetId: string, userId: string, now: number, attempt = 0): Work<{ thread: WidgetThread; created: boolean }> {
  const { db, t } = tx;
  const inserted = yield* getRow(db.insert(t.widgetThreads).values({ id: newId(), widgetId, userId, status: 'active', createdAt: now, updatedAt: now }).onConflictDoNothing().returning());
  if (inserted) return { thread: inserted, created: true };
  const existing = yield* getRow(
    db
      .select()
      .from(t.widgetThreads)
      .where(and(eq(t.widgetThreads.widgetId, widgetId), eq(t.widgetThreads.userId, userId), eq(t.widgetThreads.status, 'active'))),
  );
  // The conflicting row exists unless it was archived between the two statements; try again then.
  if (!existing) {
    if (attempt >= 3) throw new Error(`no active widget thread after ${attempt + 1} attempts`);
    return yield* getOrCreateActiveThread(tx, widgetId, userId, now, attempt + 1);
  }
  return { thread: existing, created: false };
}

export function* findThreadById({ db, t }: Tx, id: string): Work<WidgetThread | undefined> {
  return yield* getRow(db.select().from(t.widgetThreads).where(eq(t.widgetThreads.id, id)));
}

export function* listThreadMessages({ db, t }: Tx, threadId: string): Work<WidgetThreadMessage[]> {
  return yield* allRows(db.select().from(t.widgetThreadMessages).where(eq(t.widgetThreadMessages.threadId, threadId)).orderBy(asc(t.widgetThreadMessages.seq)));
}

/**
 * Append a message (run with `store.write`). `seq` is gap-free and unique under concurrent
 * appends: the thread's row is written first, which on SQLite is under the one write lock and on
 * PostgreSQL locks that row until commit, so the next append reads the maximum after this one.
 */
export function* addThreadMessage({ db, t }: Tx, threadId: string, data: Record<string, unknown>, now: number): Work<WidgetThreadMessage> {
  yield* exec(db.update(t.widgetThreads).set({ updatedAt: now }).where(eq(t.widgetThreads.id, threadId)));
  const { next } = (yield* getRow(
    db
      .select({ next: sql<number>`coalesce(max(${t.widgetThreadMessages.seq}), -1) + 1` })
      .from(t.widgetThreadMessages)
      .where(eq(t.widgetThreadMessages.threadId, threadId)),
  ))!;
  return (yield* getRow(db.insert(t.widgetThreadMessages).values({ id: newId(), threadId, seq: Number(next), data, createdAt: now }).returning()))!;
}

/** Retire an active thread; the next getOrCreateActiveThread starts a fresh one. Idempotent. */
export function* archiveThread({ db, t }: Tx, threadId: string, now: number): Work<boolean> {
  const archived = yield* getRow(
    db
      .update(t.widgetThreads)
      .set({ status: 'archived', updatedAt: now })
      .where(and(eq(t.widgetThreads.id, threadId), eq(t.widgetThreads.status, 'active')))
      .returning({ id: t.widgetThreads.id }),
  );
  return archived !== undefined;
}
