import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { responses, responseToolOutputs, type ResponseRow, type ResponseStatus } from '../db/schema';
import { newId } from '../ids';
import type { ToolCallOutput, UpstreamCursor } from '../ai/ai.types';
import { preparedFor } from '../db/prepared';

export const TERMINAL: readonly ResponseStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminal = (s: ResponseStatus) => TERMINAL.includes(s);

// On the path of every AI turn before its request goes upstream: prepared once (src/db/prepared.ts).
const hot = preparedFor((db) => ({
  insert: db.$client.prepare<never, [string, string, string, string, string, string, string, number]>(
    `INSERT INTO responses (id, conversation_id, user_id, kind, status, model, input, last_seq, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?8)`,
  ),
  setStatus: db.$client.prepare<never, [string, string, number]>('UPDATE responses SET status = ?2, updated_at = ?3 WHERE id = ?1'),
}));

export function createResponse(
  db: Db,
  input: { conversationId: string; userId: string; kind: ResponseRow['kind']; model: string; input: ResponseRow['input']; status?: ResponseStatus },
  now = Date.now(),
): ResponseRow {
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
  hot(db).insert.run(row.id, row.conversationId, row.userId, row.kind, row.status, row.model, JSON.stringify(row.input), now);
  return row;
}

export const findResponseById = (db: Db, id: string): ResponseRow | undefined => db.select().from(responses).where(eq(responses.id, id)).get();

/**
 * `lastSeq`: only for a response whose last event could not be stored (the number it would have
 * had). A response that finishes drops its tool outputs: only a turn resumed after a restart
 * reads them.
 */
export function setResponseStatus(db: Db, id: string, status: ResponseStatus, now: number, error?: string, lastSeq?: number): void {
  // `in_progress`, as every turn starts: the prepared statement.
  if (!isTerminal(status) && error === undefined && lastSeq === undefined) return void hot(db).setStatus.run(id, status, now);
  if (isTerminal(status)) db.delete(responseToolOutputs).where(eq(responseToolOutputs.responseId, id)).run();
  db.update(responses)
    .set({
      status,
      updatedAt: now,
      ...(isTerminal(status) ? { finishedAt: now } : {}),
      ...(error !== undefined ? { error } : {}),
      ...(lastSeq !== undefined ? { lastSeq } : {}),
    })
    .where(eq(responses.id, id))
    .run();
}

/** Responses a restarted server has to deal with. */
export const listUnfinishedResponses = (db: Db): ResponseRow[] =>
  db.select().from(responses).where(inArray(responses.status, ['queued', 'in_progress'])).orderBy(asc(responses.createdAt)).all();

export const listRunningInConversation = (db: Db, conversationId: string): ResponseRow[] =>
  db.select().from(responses).where(and(eq(responses.conversationId, conversationId), inArray(responses.status, ['queued', 'in_progress']))).all();

/**
 * The latest response of each conversation (by creation, then id): what a list of research runs
 * shows as "running" or "finished". One indexed read for a whole page of conversations.
 */
export function lastResponsesOf(db: Db, conversationIds: string[]): Map<string, { id: string; kind: ResponseRow['kind']; status: ResponseStatus }> {
  const last = new Map<string, { id: string; kind: ResponseRow['kind']; status: ResponseStatus }>();
  // One index step a conversation, however many turns it has (responses_conversation_idx is
  // (conversation, created, id)): a list page must not read or sort every turn it shows.
  const latest = lastResponseStatement(db);
  for (const conversationId of conversationIds) {
    const r = latest.get({ conversationId });
    if (r) last.set(conversationId, r);
  }
  return last;
}

const lastResponseStatement = preparedFor((db) =>
  db
    .select({ id: responses.id, kind: responses.kind, status: responses.status })
    .from(responses)
    .where(eq(responses.conversationId, sql.placeholder('conversationId')))
    .orderBy(desc(responses.createdAt), desc(responses.id))
    .limit(1)
    .prepare(),
);

export interface StoredEvent {
  seq: number;
  data: string;
}

/**
 * The hot path of streaming: prepared statements on the raw client, one transaction per batch.
 * Built once per process (per database) and reused by every running response.
 */
export function createEventStatements(db: Db) {
  const sqlite = db.$client;
  const insert = sqlite.prepare('INSERT INTO response_events (response_id, seq, data, created_at) VALUES (?1, ?2, ?3, ?4)');
  // Never backwards: a batch put back after a failed shared commit can be written after later ones.
  const advance = sqlite.prepare('UPDATE responses SET last_seq = max(last_seq, ?2), updated_at = ?3 WHERE id = ?1');
  const cursor = sqlite.prepare('UPDATE responses SET upstream_id = ?2, upstream_seq = ?3 WHERE id = ?1');
  const after = sqlite.prepare<StoredEvent, [string, number]>('SELECT seq, data FROM response_events WHERE response_id = ?1 AND seq > ?2 ORDER BY seq');
  const saveOutput = sqlite.prepare('INSERT OR REPLACE INTO response_tool_outputs (response_id, upstream_id, call_id, output) VALUES (?1, ?2, ?3, ?4)');
  const outputs = sqlite.prepare<ToolCallOutput, [string]>(
    'SELECT upstream_id AS upstreamId, call_id AS callId, output FROM response_tool_outputs WHERE response_id = ?1',
  );
  const write = (responseId: string, events: StoredEvent[], now: number, upstream?: UpstreamCursor, toolOutputs?: ToolCallOutput[]) => {
    for (const e of events) insert.run(responseId, e.seq, e.data, now);
    if (events.length) advance.run(responseId, events[events.length - 1]!.seq, now);
    if (upstream) cursor.run(responseId, upstream.upstreamId, upstream.sequenceNumber);
    for (const o of toolOutputs ?? []) saveOutput.run(responseId, o.upstreamId, o.callId, o.output);
  };
  const writeAlone = sqlite.transaction(write);
  return {
    /**
     * Persist a batch of events (with where the upstream stands and the tool outputs they go with)
     * atomically: in the caller's transaction when there is one (the commit queue's savepoint, a
     * turn's last events), which a nested savepoint would only slow down; otherwise in its own.
     */
    append: (responseId: string, events: StoredEvent[], now: number, upstream?: UpstreamCursor, toolOutputs?: ToolCallOutput[]) =>
      sqlite.inTransaction ? write(responseId, events, now, upstream, toolOutputs) : writeAlone.immediate(responseId, events, now, upstream, toolOutputs),
    /** Events after `seq`, in order. */
    eventsAfter: (responseId: string, seq: number): StoredEvent[] => after.all(responseId, seq),
    /** The outputs of the function tools a response has run. */
    toolOutputsOf: (responseId: string): ToolCallOutput[] => outputs.all(responseId),
  };
}

export type EventStatements = ReturnType<typeof createEventStatements>;

/** Drop the events of responses finished before `before` (replay is no longer offered for them). */
export function pruneResponseEvents(db: Db, before: number): number {
  const finished = 'SELECT id FROM responses WHERE finished_at IS NOT NULL AND finished_at < ?';
  return db.$client.run(`DELETE FROM response_events WHERE response_id IN (${finished})`, [before]).changes;
}
