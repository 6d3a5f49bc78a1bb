import { and, asc, desc, eq, gte, lt, lte, sql } from 'drizzle-orm';
import type { WidgetThread, WidgetThreadMessage } from '../db/schema';
import { allRows, countRows, exec, getRow, serializeOn, type Tx, type Work } from '../db/work';
import { newId } from '../ids';
import { checkCap, capReached } from '../http/user-caps';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/** What one user's widget threads may hold (the settings PARLEY_WIDGET_*). */
export interface ThreadCaps {
  threadMaxMessages: number;
  threadMaxBytes: number;
  userMaxMessages: number;
  userMaxBytes: number;
  userMaxThreads: number;
}

export function* findActiveThread({ db, t }: Tx, widgetId: string, userId: string): Work<WidgetThread | undefined> {
  return yield* getRow(
    db
      .select()
      .from(t.widgetThreads)
      .where(and(eq(t.widgetThreads.widgetId, widgetId), eq(t.widgetThreads.userId, userId), eq(t.widgetThreads.status, 'active'))),
  );
}

/**
 * The user's active thread for a widget, created when there is none (run with `store.write`), unless
 * the user keeps `maxThreads` threads already (409). Insert-or-ignore first, then read: the partial
 * unique index on (widget_id, user_id) WHERE status = 'active' decides which insert wins, so racing
 * callers (or processes) can never make two active threads.
 */
export function* getOrCreateActiveThread(tx: Tx, widgetId: string, userId: string, now: number, maxThreads: number, attempt = 0): Work<{ thread: WidgetThread; created: boolean }> {
  const { db, t } = tx;
  const existing = yield* findActiveThread(tx, widgetId, userId);
  if (existing) return { thread: existing, created: false };
  yield* checkCap(tx, 'widgetThreadsMaxPerUser', userId, maxThreads, countThreadsOf(tx, userId), (n) => [
    `You keep ${n} widget threads`,
    'Delete threads you no longer need first (widget/deleteThread).',
  ]);
  const inserted = yield* getRow(db.insert(t.widgetThreads).values({ id: newId(), widgetId, userId, status: 'active', createdAt: now, updatedAt: now }).onConflictDoNothing().returning());
  if (inserted) return { thread: inserted, created: true };
  // Another process made it between the two statements, unless it was archived meanwhile: look again.
  if (attempt >= 3) throw new Error(`no active widget thread after ${attempt + 1} attempts`);
  return yield* getOrCreateActiveThread(tx, widgetId, userId, now, maxThreads, attempt + 1);
}

const countThreadsOf = (tx: Tx, userId: string) => countRows(tx, tx.t.widgetThreads, eq(tx.t.widgetThreads.userId, userId));

export function* findThreadById({ db, t }: Tx, id: string): Work<WidgetThread | undefined> {
  return yield* getRow(db.select().from(t.widgetThreads).where(eq(t.widgetThreads.id, id)));
}

/** The seq of one of the thread's messages, for a page's `before`. */
export function* findMessageSeq({ db, t }: Tx, threadId: string, messageId: string): Work<number | undefined> {
  const m = t.widgetThreadMessages;
  return (yield* getRow(db.select({ seq: m.seq }).from(m).where(and(eq(m.id, messageId), eq(m.threadId, threadId)))))?.seq;
}

/**
 * A page of a thread's messages, oldest first: the newest `limit` before `beforeSeq` (or the
 * newest of all), fewer when their `data` would pass `maxBytes` (one message at least). The
 * messages' sizes are read first and only the page's `data` after, so a read costs the page,
 * never the thread. `more`: older messages remain.
 */
export function* listThreadPage(
  { db, t }: Tx,
  threadId: string,
  opts: { limit: number; maxBytes: number; beforeSeq?: number },
): Work<{ messages: WidgetThreadMessage[]; more: boolean }> {
  const m = t.widgetThreadMessages;
  const scope = and(eq(m.threadId, threadId), opts.beforeSeq === undefined ? undefined : lt(m.seq, opts.beforeSeq));
  const sizes = yield* allRows(db.select({ seq: m.seq, bytes: m.bytes }).from(m).where(scope).orderBy(desc(m.seq)).limit(opts.limit + 1));
  let taken = 0;
  let bytes = 0;
  while (taken < Math.min(opts.limit, sizes.length) && (taken === 0 || bytes + sizes[taken]!.bytes <= opts.maxBytes)) bytes += sizes[taken++]!.bytes;
  if (!taken) return { messages: [], more: false };
  const [newest, oldest] = [sizes[0]!.seq, sizes[taken - 1]!.seq];
  const messages = yield* allRows(db.select().from(m).where(and(eq(m.threadId, threadId), gte(m.seq, oldest), lte(m.seq, newest))).orderBy(asc(m.seq)));
  return { messages, more: sizes.length > taken };
}

/**
 * Append a message of `bytes` bytes (run with `store.write`), within the thread's and the user's
 * caps (409 naming the one reached). `seq` is gap-free and unique under concurrent appends: the
 * thread's row is written first, which on SQLite is under the one write lock and on PostgreSQL
 * locks that row until commit, so the next append reads the maximum after this one. The user's
 * appends queue behind each other first, so two to different threads cannot both pass the
 * user's caps. Undefined when the thread is no longer active (archived meanwhile).
 */
export function* addThreadMessage(tx: Tx, thread: WidgetThread, data: Record<string, unknown>, bytes: number, caps: ThreadCaps, now: number): Work<WidgetThreadMessage | undefined> {
  const { db, t } = tx;
  const th = t.widgetThreads;
  yield* serializeOn(tx, `widget-messages:${thread.userId}`);
  const held = yield* sumUserThreads(tx, thread.userId);
  const deleteSome = 'Delete threads you no longer need first (widget/deleteThread).';
  if (held.messages >= caps.userMaxMessages) throw capReached('widgetUserMaxMessages', caps.userMaxMessages, `Your widget threads hold ${held.messages} messages`, deleteSome);
  if (held.bytes + bytes > caps.userMaxBytes)
    throw capReached('widgetUserMaxBytes', caps.userMaxBytes, `Your widget threads hold ${held.bytes} bytes and this message has ${bytes}`, deleteSome);
  const current = yield* getRow(
    db
      .update(th)
      .set({ updatedAt: now })
      .where(and(eq(th.id, thread.id), eq(th.status, 'active')))
      .returning(),
  );
  if (!current) return undefined;
  if (current.messageCount >= caps.threadMaxMessages)
    throw capReached('widgetThreadMaxMessages', caps.threadMaxMessages, `This thread holds ${current.messageCount} messages`, 'Archive it (widget/archiveThread) to start a new one.');
  if (current.bytes + bytes > caps.threadMaxBytes)
    throw capReached('widgetThreadMaxBytes', caps.threadMaxBytes, `This thread holds ${current.bytes} bytes and this message has ${bytes}`, 'Archive it (widget/archiveThread) to start a new one.');
  const { next } = (yield* getRow(
    db
      .select({ next: sql<number>`coalesce(max(${t.widgetThreadMessages.seq}), -1) + 1` })
      .from(t.widgetThreadMessages)
      .where(eq(t.widgetThreadMessages.threadId, thread.id)),
  ))!;
  yield* exec(db.update(th).set({ messageCount: sql`${th.messageCount} + 1`, bytes: sql`${th.bytes} + ${bytes}` }).where(eq(th.id, thread.id)));
  return (yield* getRow(db.insert(t.widgetThreadMessages).values({ id: newId(), threadId: thread.id, seq: Number(next), data, bytes, createdAt: now }).returning()))!;
}

function* sumUserThreads({ db, t }: Tx, userId: string): Work<{ messages: number; bytes: number }> {
  const th = t.widgetThreads;
  return (yield* getRow(
    db
      .select({ messages: sql<number>`coalesce(sum(${th.messageCount}), 0)`.mapWith(Number), bytes: sql<number>`coalesce(sum(${th.bytes}), 0)`.mapWith(Number) })
      .from(th)
      .where(eq(th.userId, userId)),
  ))!;
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

/** Delete a thread and its messages (a cascade); false when it was gone already. */
export function* deleteThread({ db, t }: Tx, threadId: string): Work<boolean> {
  return (yield* allRows(db.delete(t.widgetThreads).where(eq(t.widgetThreads.id, threadId)).returning({ id: t.widgetThreads.id }))).length > 0;
}
