import type { Db } from '../db/connection';
import type { AppDeps } from '../deps';
import { insertGroupEvent, nextGroupSeq } from './group-events.store';

/**
 * A realtime event of a group as the broker carries it. `frame` is the complete SSE frame,
 * encoded once at publish time and shared by every subscriber (fan-out copies no bytes).
 * `seq` is null for progress events, which are not stored and carry no id.
 */
export interface GroupEvent {
  seq: number | null;
  type: string;
  data: { type: string } & Record<string, unknown>;
  frame: Uint8Array;
}

export const groupTopic = (groupId: string) => `group:${groupId}`;

const encoder = new TextEncoder();

/** `event: message`, then `id` (durable events only), `retry`, and the data on one line (JSON has no raw newlines). */
export function encodeFrame(seq: number | null, json: string, retryMs: number): Uint8Array {
  const id = seq === null ? '' : `id: ${seq}\n`;
  return encoder.encode(`event: message\n${id}retry: ${retryMs}\ndata: ${json}\n\n`);
}

export interface RecordedEvent {
  seq: number;
  data: GroupEvent['data'];
  json: string;
}

/**
 * Number and store a durable event inside the caller's write transaction. Pass the root
 * connection: the statements are prepared per connection and run inside the open transaction.
 * Publish it with `publishRecorded` right after the commit: persisted first, then delivered.
 */
export function recordGroupEvent(db: Db, groupId: string, data: GroupEvent['data'], now: number, store = true): RecordedEvent {
  const seq = nextGroupSeq(db, groupId, now);
  if (seq === undefined) throw new Error(`group ${groupId} vanished inside its own transaction`);
  const json = JSON.stringify(data);
  if (store) insertGroupEvent(db, { groupId, seq, type: data.type, data: json }, now);
  return { seq, data, json };
}

export function publishRecorded(deps: AppDeps, groupId: string, ev: RecordedEvent): void {
  const event: GroupEvent = { seq: ev.seq, type: ev.data.type, data: ev.data, frame: encodeFrame(ev.seq, ev.json, deps.config.sseRetryMs) };
  deps.bus.publish(groupTopic(groupId), event);
}

/** A progress event: delivered live, never stored, no id (a resuming client gets the final message instead). */
export function publishProgress(deps: AppDeps, groupId: string, data: GroupEvent['data']): void {
  const event: GroupEvent = { seq: null, type: data.type, data, frame: encodeFrame(null, JSON.stringify(data), deps.config.sseRetryMs) };
  deps.bus.publish(groupTopic(groupId), event);
}
