import { and, asc, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { ApiResponseRow, ApiResponseStatus } from '../db/schema';
import type { StoredEvent } from '../chat/response.store';
import { allRows, exec, execCount, getRow, type Tx, type Work } from '../db/work';

// Units of work (src/db/work.ts) on the `/v1` door's responses (src/db/schema/api-responses.ts).

export const API_TERMINAL: readonly ApiResponseStatus[] = ['completed', 'failed', 'cancelled', 'incomplete'];
export const isApiTerminal = (s: ApiResponseStatus) => API_TERMINAL.includes(s);

export function* insertApiResponse(tx: Tx, row: ApiResponseRow): Work<void> {
  yield* exec(tx.db.insert(tx.t.apiResponses).values(row));
}

export function* findApiResponse({ db, t }: Tx, id: string): Work<ApiResponseRow | undefined> {
  return yield* getRow(db.select().from(t.apiResponses).where(eq(t.apiResponses.id, id)));
}

/** A response's state and object as they stand now; `finishedAt` once it ended. */
export function* updateApiResponse(
  { db, t }: Tx,
  id: string,
  patch: { status: ApiResponseStatus; body: Record<string, unknown>; conversationId?: string; lastSeq?: number },
  now: number,
): Work<void> {
  yield* exec(
    db
      .update(t.apiResponses)
      .set({ ...patch, updatedAt: now, ...(isApiTerminal(patch.status) ? { finishedAt: now } : {}) })
      .where(eq(t.apiResponses.id, id)),
  );
}

/** A batch of a background response's events (the event log's `append`, src/chat/event-log.ts). */
export function* appendApiEvents({ db, t }: Tx, responseId: string, events: StoredEvent[], now: number): Work<void> {
  if (!events.length) return;
  yield* exec(db.insert(t.apiResponseEvents).values(events.map((e) => ({ responseId, seq: e.seq, data: e.data, createdAt: now }))));
  const last = events[events.length - 1]!.seq;
  // Never backwards: a batch put back after a failed shared commit can be written after later ones.
  yield* exec(db.update(t.apiResponses).set({ lastSeq: sql`CASE WHEN ${t.apiResponses.lastSeq} > ${last} THEN ${t.apiResponses.lastSeq} ELSE ${last} END`, updatedAt: now }).where(eq(t.apiResponses.id, responseId)));
}

export function* apiEventsAfter({ db, t }: Tx, responseId: string, seq: number): Work<StoredEvent[]> {
  return yield* allRows(
    db
      .select({ seq: t.apiResponseEvents.seq, data: t.apiResponseEvents.data })
      .from(t.apiResponseEvents)
      .where(and(eq(t.apiResponseEvents.responseId, responseId), sql`${t.apiResponseEvents.seq} > ${seq}`))
      .orderBy(asc(t.apiResponseEvents.seq)),
  );
}

/**
 * Background responses still queued or running that no instance holds the turn lease of
 * (src/chat/turn-leases.ts; `all`: every one, a SQLite server's previous process held them all).
 */
export function* listInterruptedApiResponses({ db, t }: Tx, now: number, all: boolean): Work<ApiResponseRow[]> {
  const held = sql`EXISTS (SELECT 1 FROM ${t.leases} WHERE ${t.leases.name} = 'response:' || ${t.apiResponses.id} AND ${t.leases.expiresAt} > ${now})`;
  const unfinished = inArray(t.apiResponses.status, ['queued', 'in_progress']);
  return yield* allRows(
    db
      .select()
      .from(t.apiResponses)
      .where(all ? unfinished : and(unfinished, sql`NOT ${held}`))
      .orderBy(asc(t.apiResponses.createdAt)),
  );
}

/**
 * Retention (src/tasks/prune-expired.ts): responses kept in no conversation, ended before
 * `unkeptBefore`, go whole (their events with them); the events of those kept in a conversation
 * go once they ended before `eventsBefore`, as the events of Parley's own turns do.
 */
export function* pruneApiResponses({ db, t }: Tx, unkeptBefore: number, eventsBefore: number): Work<{ responses: number; events: number }> {
  const endedBefore = (when: number) => and(isNotNull(t.apiResponses.finishedAt), lt(t.apiResponses.finishedAt, when));
  const responses = yield* execCount(db.delete(t.apiResponses).where(and(endedBefore(unkeptBefore), isNull(t.apiResponses.conversationId))));
  const kept = db.select({ id: t.apiResponses.id }).from(t.apiResponses).where(endedBefore(eventsBefore));
  const events = yield* execCount(db.delete(t.apiResponseEvents).where(inArray(t.apiResponseEvents.responseId, kept)));
  return { responses, events };
}
