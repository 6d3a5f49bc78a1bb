import { and, asc, desc, eq, inArray, isNull, lt, or, sql, type Column } from 'drizzle-orm';
import type { SupportAuthor, SupportMessage, SupportStatus, SupportThread } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike. The rules
// (caps, lengths, reopening) are in support.rules.ts; these only read and write.

/** A position in a list ordered by (time, id) descending: where the next page starts. */
export interface PagePosition {
  at: number;
  id: string;
}

export interface NewSupportMessage {
  author: SupportAuthor;
  body: string;
  adminName?: string | null;
  adminEmail?: string | null;
}

/** A thread with its user's e-mail, for the admins' list. */
export type SupportThreadWithUser = SupportThread & { userEmail: string };

export function* findSupportThread({ db, t }: Tx, id: string): Work<SupportThread | undefined> {
  return yield* getRow(db.select().from(t.supportThreads).where(eq(t.supportThreads.id, id)));
}

export function* findSupportThreadWithUser({ db, t }: Tx, id: string): Work<SupportThreadWithUser | undefined> {
  const s = t.supportThreads;
  const row = yield* getRow(db.select({ thread: s, userEmail: t.users.email }).from(s).innerJoin(t.users, eq(t.users.id, s.userId)).where(eq(s.id, id)));
  return row && { ...row.thread, userEmail: row.userEmail };
}

export function* countOpenSupportThreads({ db, t }: Tx, userId: string): Work<number> {
  const s = t.supportThreads;
  return (yield* getRow(db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(s).where(and(eq(s.userId, userId), eq(s.status, 'open')))))!.n;
}

export function* insertSupportThread({ db, t }: Tx, userId: string, subject: string, now: number): Work<SupportThread> {
  return (yield* getRow(
    db.insert(t.supportThreads).values({ id: newId(), userId, subject, status: 'open', createdAt: now, updatedAt: now, lastMessageAt: now }).returning(),
  ))!;
}

/** A message, read by its own side from the start; the thread's activity time follows it. */
export function* insertSupportMessage({ db, t }: Tx, threadId: string, m: NewSupportMessage, now: number): Work<SupportMessage> {
  const row = yield* getRow(
    db
      .insert(t.supportMessages)
      .values({
        id: newId(),
        threadId,
        author: m.author,
        adminName: m.author === 'admin' ? (m.adminName ?? null) : null,
        adminEmail: m.author === 'admin' ? (m.adminEmail ?? null) : null,
        body: m.body,
        createdAt: now,
        readByUserAt: m.author === 'user' ? now : null,
        readByAdminAt: m.author === 'admin' ? now : null,
      })
      .returning(),
  );
  yield* exec(db.update(t.supportThreads).set({ lastMessageAt: now, updatedAt: now }).where(eq(t.supportThreads.id, threadId)));
  return row!;
}

export function* setSupportThreadStatus({ db, t }: Tx, id: string, status: SupportStatus, now: number): Work<SupportThread> {
  return (yield* getRow(
    db
      .update(t.supportThreads)
      .set({ status, updatedAt: now, closedAt: status === 'closed' ? now : null })
      .where(eq(t.supportThreads.id, id))
      .returning(),
  ))!;
}

/** Mark the other side's messages read by `reader`; how many were unread. */
export function* markSupportMessagesRead({ db, t }: Tx, threadId: string, reader: SupportAuthor, now: number): Work<number> {
  const m = t.supportMessages;
  const column = reader === 'user' ? m.readByUserAt : m.readByAdminAt;
  const rows = yield* allRows(
    db
      .update(m)
      .set(reader === 'user' ? { readByUserAt: now } : { readByAdminAt: now })
      .where(and(eq(m.threadId, threadId), isNull(column)))
      .returning({ id: m.id }),
  );
  return rows.length;
}

/** Unread messages per thread for `reader` (threads with none are absent). */
export function* countUnreadSupportMessages({ db, t }: Tx, threadIds: string[], reader: SupportAuthor): Work<Map<string, number>> {
  if (!threadIds.length) return new Map();
  const m = t.supportMessages;
  const rows = yield* allRows(
    db
      .select({ threadId: m.threadId, n: sql<number>`count(*)`.mapWith(Number) })
      .from(m)
      .where(and(inArray(m.threadId, threadIds), isNull(reader === 'user' ? m.readByUserAt : m.readByAdminAt)))
      .groupBy(m.threadId),
  );
  return new Map(rows.map((r) => [r.threadId, r.n]));
}

/** Rows that come after `p` in a (time, id) descending order; no condition without a position. */
const pastPosition = (time: Column, id: Column, p: PagePosition | undefined) => (p ? or(lt(time, p.at), and(eq(time, p.at), lt(id, p.id))) : undefined);

/** The user's threads, newest activity first: one page (`limit` rows) after `after`. */
export function* listSupportThreadsOfUser(
  { db, t }: Tx,
  userId: string,
  opts: { limit: number; after?: PagePosition; status?: SupportStatus },
): Work<SupportThread[]> {
  const s = t.supportThreads;
  return yield* allRows(
    db
      .select()
      .from(s)
      .where(and(eq(s.userId, userId), opts.status ? eq(s.status, opts.status) : undefined, pastPosition(s.lastMessageAt, s.id, opts.after)))
      .orderBy(desc(s.lastMessageAt), desc(s.id))
      .limit(opts.limit),
  );
}

/** Every user's threads with the user's e-mail, newest activity first (the admins' list). */
export function* listSupportThreadsForAdmins({ db, t }: Tx, opts: { limit: number; status?: SupportStatus }): Work<SupportThreadWithUser[]> {
  const s = t.supportThreads;
  const rows = yield* allRows(
    db
      .select({ thread: s, userEmail: t.users.email })
      .from(s)
      .innerJoin(t.users, eq(t.users.id, s.userId))
      .where(opts.status ? eq(s.status, opts.status) : undefined)
      .orderBy(desc(s.lastMessageAt), desc(s.id))
      .limit(opts.limit),
  );
  return rows.map((r) => ({ ...r.thread, userEmail: r.userEmail }));
}

/**
 * A thread's messages, oldest first: all of them, or the newest `limit` written before `olderThan`
 * (a page read backwards, as a conversation view scrolls up).
 */
export function* listSupportMessages({ db, t }: Tx, threadId: string, opts: { limit?: number; olderThan?: PagePosition } = {}): Work<SupportMessage[]> {
  const m = t.supportMessages;
  const where = and(eq(m.threadId, threadId), pastPosition(m.createdAt, m.id, opts.olderThan));
  if (opts.limit === undefined) return yield* allRows(db.select().from(m).where(where).orderBy(asc(m.createdAt), asc(m.id)));
  const newest = yield* allRows(db.select().from(m).where(where).orderBy(desc(m.createdAt), desc(m.id)).limit(opts.limit));
  return newest.reverse();
}
