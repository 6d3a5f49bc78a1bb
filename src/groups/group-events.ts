import type { Db } from '../db/connection';
import type { AppDeps } from '../deps';
import type { Bus } from '../pubsub/bus';
import { insertGroupEvent, nextGroupSeq } from './group-events.store';
import { findGroupById } from './group.store';
import { messageFrame } from '../http/sse';

/**
 * A realtime event of a group as the broker carries it. `frame` is the complete SSE frame,
 * encoded once at publish time and shared by every subscriber (fan-out copies no bytes).
 * `seq` is null for progress events: they are not stored, and their id (`<seq>.<n>`, the n-th
 * progress event after the durable event `seq`) is only for display order, never replayed.
 */
export interface GroupEvent {
  seq: number | null;
  type: string;
  data: { type: string } & Record<string, unknown>;
  frame: Uint8Array;
}

export const groupTopic = (groupId: string) => `group:${groupId}`;

const encoder = new TextEncoder();

/** A group frame (`id` when given, `retry`), encoded once for every subscriber. */
const encodeFrame = (id: string | null, json: string, retryMs: number): Uint8Array => encoder.encode(messageFrame(json, id, retryMs));

/**
 * Per app (keyed by its bus, so no state outlives the app): for each group, the last durable seq
 * published and how many progress events followed it. Progress ids `<seq>.<n>` then increase
 * with every frame of the group, and a client that resumes from one replays everything after `seq`.
 */
const progressCounters = new WeakMap<Bus, Map<string, { seq: number; n: number }>>();
function countersOf(bus: Bus) {
  let m = progressCounters.get(bus);
  if (!m) progressCounters.set(bus, (m = new Map()));
  return m;
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
  const counters = countersOf(deps.bus);
  if (ev.data.type === 'group.deleted') counters.delete(groupId);
  else counters.set(groupId, { seq: ev.seq, n: 0 });
  const event: GroupEvent = { seq: ev.seq, type: ev.data.type, data: ev.data, frame: encodeFrame(String(ev.seq), ev.json, deps.config.sseRetryMs) };
  deps.bus.publish(groupTopic(groupId), event);
}

/** A progress event: delivered live, never stored (a resuming client gets the final message instead). */
export function publishProgress(deps: AppDeps, groupId: string, data: GroupEvent['data']): void {
  const counters = countersOf(deps.bus);
  let c = counters.get(groupId);
  if (!c) counters.set(groupId, (c = { seq: findGroupById(deps.db, groupId)?.lastSeq ?? 0, n: 0 }));
  const id = `${c.seq}.${++c.n}`;
  const event: GroupEvent = { seq: null, type: data.type, data, frame: encodeFrame(id, JSON.stringify(data), deps.config.sseRetryMs) };
  deps.bus.publish(groupTopic(groupId), event);
}
