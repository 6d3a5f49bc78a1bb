import { and, asc, eq, gt, lt } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { groupEvents, groupInvites } from '../db/schema';
import { DAY_MS } from '../time';
import { preparedFor } from '../db/prepared';

// Plain SQLite statements: both run for every group message (see `appendItem` in the chat store).
const hot = preparedFor((db) => ({
  // An UPDATE and a SELECT rather than UPDATE … RETURNING, which opens a statement journal and
  // so flushes the full-text index's pending terms on every message (bench/RESULTS.md, change 14).
  bumpSeq: db.$client.prepare<never, [string, number]>('UPDATE group_chats SET last_seq = last_seq + 1, updated_at = ?2 WHERE id = ?1'),
  readSeq: db.$client.prepare<{ seq: number }, [string]>('SELECT last_seq AS seq FROM group_chats WHERE id = ?1'),
  insert: db.$client.prepare<never, [string, number, string, string, number]>(
    'INSERT INTO group_events (group_id, seq, type, data, created_at) VALUES (?1, ?2, ?3, ?4, ?5)',
  ),
}));

/**
 * Take the group's next event number. Call inside the write transaction that makes the change the
 * event describes (pass the root connection: statements are prepared per connection): the number
 * and the change commit together, so ids follow commit order. Also bumps the group's updatedAt
 * (a group's activity is its events).
 */
export function nextGroupSeq(db: Db, groupId: string, now: number): number | undefined {
  const stmts = hot(db);
  if (stmts.bumpSeq.run(groupId, now).changes === 0) return undefined;
  return stmts.readSeq.all(groupId)[0]?.seq;
}

/** Store a durable event under `seq`; `data` is the frame's JSON, serialised once by the caller. */
export function insertGroupEvent(db: Db, row: { groupId: string; seq: number; type: string; data: string }, now: number): void {
  hot(db).insert.run(row.groupId, row.seq, row.type, row.data, now);
}

/** Stored events after `afterSeq`, oldest first: what a reconnecting subscriber missed. */
export const listGroupEventsAfter = (db: Db, groupId: string, afterSeq: number) =>
  db
    .select({ seq: groupEvents.seq, type: groupEvents.type, data: groupEvents.data })
    .from(groupEvents)
    .where(and(eq(groupEvents.groupId, groupId), gt(groupEvents.seq, afterSeq)))
    .orderBy(asc(groupEvents.seq))
    .all();

// bun:sqlite reports the count; drizzle's type for run() just does not say so.
const changes = (r: unknown) => (r as { changes?: number } | undefined)?.changes ?? 0;

/** Drop events older than the retention window and invites past their expiry. */
export function pruneGroupEvents(db: Db, retentionDays: number, now: number): { events: number; invites: number } {
  const events = changes(db.delete(groupEvents).where(lt(groupEvents.createdAt, now - retentionDays * DAY_MS)).run());
  const invites = changes(db.delete(groupInvites).where(lt(groupInvites.expiresAt, now)).run());
  return { events, invites };
}

