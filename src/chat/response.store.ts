import { and, asc, desc, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import { responses, type ResponseRow, type ResponseStatus } from '../db/schema';
import { newId } from '../ids';
import type { ToolCallOutput, UpstreamCursor } from '../ai/ai.types';
import { preparedFor } from '../db/prepared';
import { allRows, exec, execCount, getRow, hotOr, type Tx, type Work } from '../db/work';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike. The hot
// ones run SQLite statements prepared once (`hot`, through `hotOr`) and the builder on PostgreSQL.

export const TERMINAL: readonly ResponseStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminal = (s: ResponseStatus) => TERMINAL.includes(s);

// On the path of every AI turn before its request goes upstream, and of every batch of its
// events: prepared once (src/db/prepared.ts), plain statements on the raw client.
const hot = preparedFor((db) => {
  const sqlite = db.$client;
  return {
    insert: sqlite.prepare<never, [string, string, string, string, string, string, string, number]>(
      `INSERT INTO responses (id, conversation_id, user_id, kind, status, model, input, last_seq, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?8)`,
    ),
    setStatus: sqlite.prepare<never, [string, string, number]>('UPDATE responses SET status = ?2, updated_at = ?3 WHERE id = ?1'),
    insertEvent: sqlite.prepare<never, [string, number, string, number]>('INSERT INTO response_events (response_id, seq, data, created_at) VALUES (?1, ?2, ?3, ?4)'),
    // Never backwards: a batch put back after a failed shared commit can be written after later ones.
    advance: sqlite.prepare<never, [string, number, number]>('UPDATE responses SET last_seq = max(last_seq, ?2), updated_at = ?3 WHERE id = ?1'),
    cursor: sqlite.prepare<never, [string, string, number]>('UPDATE responses SET upstream_id = ?2, upstream_seq = ?3 WHERE id = ?1'),
    after: sqlite.prepare<StoredEvent, [string, number]>('SELECT seq, data FROM response_events WHERE response_id = ?1 AND seq > ?2 ORDER BY seq'),
    saveOutput: sqlite.prepare<never, [string, string, string, string]>(
      'INSERT OR REPLACE INTO response_tool_outputs (response_id, upstream_id, call_id, output) VALUES (?1, ?2, ?3, ?4)',
    ),
    outputs: sqlite.prepare<ToolCallOutput, [string]>('SELECT upstream_id AS upstreamId, call_id AS callId, output FROM response_tool_outputs WHERE response_id = ?1'),
    // One index step a conversation, however many turns it has (responses_conversation_idx is
    // (conversation, created, id)): a list page must not read or sort every turn it shows.
    last: sqlite.prepare<LastResponse, [string]>('SELECT id, kind, status FROM responses WHERE conversation_id = ?1 ORDER BY created_at DESC, id DESC LIMIT 1'),
  };
});

export function* createResponse(
  tx: Tx,
  input: { conversationId: string; userId: string; kind: ResponseRow['kind']; model: string; input: ResponseRow['input']; status?: ResponseStatus },
  now = Date.now(),
): Work<ResponseRow> {
  const row: ResponseRow = {
    id: newId(),
    conversationId: input.conversationId,
    userId: input.userId,
    kind: input.kind,
    status: input.status ?? 'queued',
    model: input.model,
    input: input.input,
    upstreamId: null,
    upstreamSeq: null,
    error: null,
    lastSeq: 0,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
  yield* hotOr(
    tx,
    (db) => void hot(db).insert.run(row.id, row.conversationId, row.userId, row.kind, row.status, row.model, JSON.stringify(row.input), now),
    () => exec(tx.db.insert(tx.t.responses).values(row)),
  );
  return row;
}

export function* findResponseById({ db, t }: Tx, id: string): Work<ResponseRow | undefined> {
  return yield* getRow(db.select().from(t.responses).where(eq(t.responses.id, id)));
}

/**
 * `lastSeq`: only for a response whose last event could not be stored (the number it would have
 * had). A response that finishes drops its tool outputs: only a turn resumed after a restart
 * reads them.
 */
export function* setResponseStatus(tx: Tx, id: string, status: ResponseStatus, now: number, error?: string, lastSeq?: number): Work<void> {
  const { db, t } = tx;
  // `in_progress`, as every turn starts: the prepared statement.
  if (!isTerminal(status) && error === undefined && lastSeq === undefined)
    return yield* hotOr(tx, (d) => void hot(d).setStatus.run(id, status, now), () => exec(db.update(t.responses).set({ status, updatedAt: now }).where(eq(t.responses.id, id))));
  if (isTerminal(status)) yield* exec(db.delete(t.responseToolOutputs).where(eq(t.responseToolOutputs.responseId, id)));
  yield* exec(
    db
      .update(t.responses)
      .set({
        status,
        updatedAt: now,
        ...(isTerminal(status) ? { finishedAt: now } : {}),
        ...(error !== undefined ? { error } : {}),
        ...(lastSeq !== undefined ? { lastSeq } : {}),
      })
      .where(eq(t.responses.id, id)),
  );
}

/**
 * Unfinished responses no instance holds the lease of (src/chat/turn-leases.ts): their owner
 * died, or stopped and let them go. Oldest first.
 */
export function* listOrphanedResponses({ db, t }: Tx, now: number): Work<ResponseRow[]> {
  const held = sql`EXISTS (SELECT 1 FROM ${t.leases} WHERE ${t.leases.name} = 'response:' || ${t.responses.id} AND ${t.leases.expiresAt} > ${now})`;
  return yield* allRows(
    db
      .select()
      .from(t.responses)
      .where(and(inArray(t.responses.status, ['queued', 'in_progress']), sql`NOT ${held}`))
      .orderBy(asc(t.responses.createdAt)),
  );
}

/** How many turns of a user are queued or running, on every instance (the status index: unfinished rows are few). */
export function* countUnfinishedOfUser({ db, t }: Tx, userId: string): Work<number> {
  const row = yield* getRow(
    db
      .select({ n: sql<number>`count(*)` })
      .from(t.responses)
      .where(and(inArray(t.responses.status, ['queued', 'in_progress']), eq(t.responses.userId, userId))),
  );
  return Number(row?.n ?? 0);
}

/** Responses a restarted server has to deal with. */
export function* listUnfinishedResponses({ db, t }: Tx): Work<ResponseRow[]> {
  return yield* allRows(db.select().from(t.responses).where(inArray(t.responses.status, ['queued', 'in_progress'])).orderBy(asc(t.responses.createdAt)));
}

export function* listRunningInConversation({ db, t }: Tx, conversationId: string): Work<ResponseRow[]> {
  return yield* allRows(
    db
      .select()
      .from(t.responses)
      .where(and(eq(t.responses.conversationId, conversationId), inArray(t.responses.status, ['queued', 'in_progress']))),
  );
}

type LastResponse = { id: string; kind: ResponseRow['kind']; status: ResponseStatus };

/**
 * The latest response of each conversation (by creation, then id): what a list of research runs
 * shows as "running" or "finished". One indexed read a conversation of the page.
 */
export function* lastResponsesOf(tx: Tx, conversationIds: string[]): Work<Map<string, LastResponse>> {
  const { db, t } = tx;
  const last = new Map<string, LastResponse>();
  for (const conversationId of conversationIds) {
    const r = yield* hotOr(
      tx,
      (d) => hot(d).last.get(conversationId) ?? undefined,
      () =>
        getRow(
          db
            .select({ id: t.responses.id, kind: t.responses.kind, status: t.responses.status })
            .from(t.responses)
            .where(eq(t.responses.conversationId, conversationId))
            .orderBy(desc(t.responses.createdAt), desc(t.responses.id))
            .limit(1),
        ),
    );
    if (r) last.set(conversationId, r);
  }
  return last;
}

export interface StoredEvent {
  seq: number;
  data: string;
}

/**
 * Persist a batch of a response's events, with where the upstream stands and the tool outputs
 * they go with, inside the caller's transaction (the commit queue's, or a turn's last write with
 * its final state): all of it, or none. The hot path of streaming.
 */
export function* appendEvents(tx: Tx, responseId: string, events: StoredEvent[], now: number, upstream?: UpstreamCursor, toolOutputs?: ToolCallOutput[]): Work<void> {
  const { db, t } = tx;
  const last = events.length ? events[events.length - 1]!.seq : undefined;
  yield* hotOr(
    tx,
    (d) => {
      const s = hot(d);
      for (const e of events) s.insertEvent.run(responseId, e.seq, e.data, now);
      if (last !== undefined) s.advance.run(responseId, last, now);
      if (upstream) s.cursor.run(responseId, upstream.upstreamId, upstream.sequenceNumber);
      for (const o of toolOutputs ?? []) s.saveOutput.run(responseId, o.upstreamId, o.callId, o.output);
    },
    function* () {
      if (events.length) yield* exec(db.insert(t.responseEvents).values(events.map((e) => ({ responseId, seq: e.seq, data: e.data, createdAt: now }))));
      if (last !== undefined)
        yield* exec(db.update(t.responses).set({ lastSeq: sql`GREATEST(${t.responses.lastSeq}, ${last})`, updatedAt: now }).where(eq(t.responses.id, responseId)));
      if (upstream) yield* exec(db.update(t.responses).set({ upstreamId: upstream.upstreamId, upstreamSeq: upstream.sequenceNumber }).where(eq(t.responses.id, responseId)));
      for (const o of toolOutputs ?? [])
        yield* exec(
          db
            .insert(t.responseToolOutputs)
            .values({ responseId, upstreamId: o.upstreamId, callId: o.callId, output: o.output })
            .onConflictDoUpdate({ target: [t.responseToolOutputs.responseId, t.responseToolOutputs.upstreamId, t.responseToolOutputs.callId], set: { output: o.output } }),
        );
    },
  );
}

/** A response's stored events after `seq`, in order. */
export function* eventsAfter(tx: Tx, responseId: string, seq: number): Work<StoredEvent[]> {
  const { db, t } = tx;
  return yield* hotOr(
    tx,
    (d) => hot(d).after.all(responseId, seq),
    () =>
      allRows(
        db
          .select({ seq: t.responseEvents.seq, data: t.responseEvents.data })
          .from(t.responseEvents)
          .where(and(eq(t.responseEvents.responseId, responseId), sql`${t.responseEvents.seq} > ${seq}`))
          .orderBy(asc(t.responseEvents.seq)),
      ),
  );
}

/** The outputs of the function tools a response has run (a turn resumed after a restart). */
export function* toolOutputsOf({ db, t }: Tx, responseId: string): Work<ToolCallOutput[]> {
  return yield* allRows(
    db
      .select({ upstreamId: t.responseToolOutputs.upstreamId, callId: t.responseToolOutputs.callId, output: t.responseToolOutputs.output })
      .from(t.responseToolOutputs)
      .where(eq(t.responseToolOutputs.responseId, responseId)),
  );
}

/** Drop the events of responses finished before `before` (replay is no longer offered for them); returns how many went. */
export function* pruneResponseEvents({ db, t }: Tx, before: number): Work<number> {
  const finished = db
    .select({ id: t.responses.id })
    .from(t.responses)
    .where(and(isNotNull(t.responses.finishedAt), lt(t.responses.finishedAt, before)));
  return yield* execCount(db.delete(t.responseEvents).where(inArray(t.responseEvents.responseId, finished)));
}
