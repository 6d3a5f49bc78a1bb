import { and, asc, eq, gt, lt, sql } from 'drizzle-orm';
import { DAY_MS } from '../time';
import { preparedFor } from '../db/prepared';
import { allRows, exec, execCount, getRow, hotOr, type Tx, type Work } from '../db/work';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

// Plain SQLite statements: all three run for every group message (see `appendItem` in the chat store).
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
 * Take the group's next event number and, unless `store` is false, store the event under it (`data`
 * is the frame's JSON, serialised once by the caller); undefined when there is no such group. Run
 * it inside the write transaction that makes the change the event describes: the number and the
 * change commit together, so ids follow commit order (on PostgreSQL the UPDATE holds the group's
 * row lock until the commit, so two transactions cannot take numbers out of order). Also bumps the
 * group's updatedAt (a group's activity is its events). One unit for the number and the row, not
 * two: this runs for every message, and each unit a message's work goes through costs it time.
 */
export function* appendGroupEvent(tx: Tx, groupId: string, event: { type: string; data: string }, now: number, store = true): Work<number | undefined> {
  const { db, t } = tx;
  return yield* hotOr(
    tx,
    (d) => {
      const stmts = hot(d);
      if (stmts.bumpSeq.run(groupId, now).changes === 0) return undefined;
      const seq = stmts.readSeq.all(groupId)[0]!.seq;
      if (store) stmts.insert.run(groupId, seq, event.type, event.data, now);
      return seq;
    },
    function* () {
      const row = yield* getRow(
        db
          .update(t.groupChats)
          .set({ lastSeq: sql`${t.groupChats.lastSeq} + 1`, updatedAt: now })
          .where(eq(t.groupChats.id, groupId))
          .returning({ seq: t.groupChats.lastSeq }),
      );
      if (row && store) yield* exec(db.insert(t.groupEvents).values({ groupId, seq: row.seq, type: event.type, data: event.data, createdAt: now }));
      return row?.seq;
    },
  );
}

/** Stored events after `afterSeq`, oldest first: what a reconnecting subscriber missed. */
export function* listGroupEventsAfter({ db, t }: Tx, groupId: string, afterSeq: number): Work<{ seq: number; type: string; data: string }[]> {
  return yield* allRows(
    db
      .select({ seq: t.groupEvents.seq, type: t.groupEvents.type, data: t.groupEvents.data })
      .from(t.groupEvents)
      .where(and(eq(t.groupEvents.groupId, groupId), gt(t.groupEvents.seq, afterSeq)))
      .orderBy(asc(t.groupEvents.seq)),
  );
}

/** Drop events older than the retention window and invites past their expiry. */
export function* pruneGroupEvents({ db, t }: Tx, retentionDays: number, now: number): Work<{ events: number; invites: number }> {
  const events = yield* execCount(db.delete(t.groupEvents).where(lt(t.groupEvents.createdAt, now - retentionDays * DAY_MS)));
  const invites = yield* execCount(db.delete(t.groupInvites).where(lt(t.groupInvites.expiresAt, now)));
  return { events, invites };
}
