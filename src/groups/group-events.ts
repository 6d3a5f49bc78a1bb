import type { AppDeps } from '../deps';
import type { Bus } from '../pubsub/bus';
import type { Tx, Work } from '../db/work';
import { appendGroupEvent, listGroupEventsAfter } from './group-events.store';
import type { ClusterBus } from '../pubsub/cluster-bus';
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
  /** A progress event's place `<seq>.<n>` (durable events are `seq` alone). */
  at?: EventPosition;
  type: string;
  data: { type: string } & Record<string, unknown>;
  frame: Uint8Array;
}

export const groupTopic = (groupId: string) => `group:${groupId}`;

/** Where an event stands in a group's order: durable `seq` is `{seq, n: 0}`, progress `<seq>.<n>` is `{seq, n}`. */
export interface EventPosition {
  seq: number;
  n: number;
}

export const isAfter = (a: EventPosition, b: EventPosition) => a.seq > b.seq || (a.seq === b.seq && a.n > b.n);

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
 * Number and store a durable event inside the caller's write transaction (a unit of work).
 * Publish it with `publishRecorded` once that transaction has committed (`afterCommit`):
 * persisted first, then delivered.
 */
export function* recordGroupEvent(tx: Tx, groupId: string, data: GroupEvent['data'], now: number, store = true): Work<RecordedEvent> {
  const json = JSON.stringify(data);
  const seq = yield* appendGroupEvent(tx, groupId, { type: data.type, data: json }, now, store);
  if (seq === undefined) throw new Error(`group ${groupId} vanished inside its own transaction`);
  return { seq, data, json };
}

export function publishRecorded(deps: AppDeps, groupId: string, ev: RecordedEvent): void {
  const relay = relays.get(deps.bus);
  if (relay) return relay.publish(groupId, ev);
  deps.bus.publish(groupTopic(groupId), noteDurable(deps, groupId, ev.seq, ev.data, ev.json));
}

/** This instance's bookkeeping of a durable event published here or by another instance; returns the event to deliver. */
function noteDurable(deps: AppDeps, groupId: string, seq: number, data: GroupEvent['data'], json: string): GroupEvent {
  const counters = countersOf(deps.bus);
  if (data.type === 'group.deleted') {
    counters.delete(groupId);
    answersOf(deps.bus).delete(groupId);
  } else counters.set(groupId, { seq, n: 0 });
  // The answer's outcome is stored: a resume from now on replays it instead of its deltas.
  const replyTo = data.replyTo;
  if (typeof replyTo === 'string' && (data.type === 'message.created' || data.type === 'assistant.failed')) endAnswer(deps, groupId, replyTo);
  return { seq, type: data.type, data, frame: encodeFrame(String(seq), json, deps.config.sseRetryMs) };
}

/**
 * A group stream opening learned the group's last seq: the group's events after it are delivered
 * in sequence from there (the relay below), unless this instance already follows the group.
 */
export function noteGroupOpened(deps: AppDeps, groupId: string, lastSeq: number): void {
  const counters = countersOf(deps.bus);
  if (!counters.has(groupId)) counters.set(groupId, { seq: lastSeq, n: 0 });
}

/** A group event as it crosses to the other instances: its frame is made again there. */
interface WireGroupEvent {
  s: number | null;
  at?: EventPosition;
  d: GroupEvent['data'];
}

/** What `publishRecorded` goes through on an instance of a cluster (per bus, so per app). */
interface GroupRelay {
  publish(groupId: string, ev: RecordedEvent): void;
}
const relays = new WeakMap<Bus, GroupRelay>();

/**
 * How group events cross instances on a cluster bus (src/pubsub/cluster-bus.ts). Events of one
 * group come from every instance its members write through, and the bus keeps order per sender
 * only: an event stored here may be published before an earlier one stored on another instance
 * arrives, and a stream never sends an id twice, so it would drop the late one. So each instance
 * delivers a group's durable events to its own listeners in sequence, its own and the others'
 * alike: one that comes early waits, and the missing ones are read from the database (where they
 * were stored before they were sent), then everything goes in order. Events go to the other
 * instances at once. Progress events are delivered as they come (they are not stored, and a
 * resume does without them).
 */
export function attachGroupRelay(deps: AppDeps, cluster: ClusterBus): { catchUp(): void } {
  const early = new Map<string, Map<number, GroupEvent['data']>>();
  const reading = new Set<string>();
  const last = (groupId: string) => countersOf(deps.bus).get(groupId)?.seq;
  const deliver = (groupId: string, seq: number, data: GroupEvent['data']) =>
    cluster.publishHere(groupTopic(groupId), noteDurable(deps, groupId, seq, data, JSON.stringify(data)));
  // What waits, in order, once nothing before it is missing (after a read: whatever is left).
  const flush = (groupId: string, force: boolean) => {
    const waiting = early.get(groupId);
    if (!waiting) return;
    for (const seq of [...waiting.keys()].sort((a, b) => a - b)) {
      const at = last(groupId);
      if (at !== undefined && seq <= at) waiting.delete(seq);
      else if (force || at === undefined || seq === at + 1) {
        deliver(groupId, seq, waiting.get(seq)!);
        waiting.delete(seq);
      } else break;
    }
    if (!waiting.size) early.delete(groupId);
  };
  const readMissing = (groupId: string) => {
    if (reading.has(groupId)) return;
    reading.add(groupId);
    const after = last(groupId) ?? 0;
    deps.store
      .read((tx) => listGroupEventsAfter(tx, groupId, after))
      .then((rows) => {
        for (const row of rows) {
          const at = last(groupId);
          if (at === undefined || row.seq > at) deliver(groupId, row.seq, JSON.parse(row.data) as GroupEvent['data']);
        }
      })
      .catch((err) => deps.log.warn('group events missed from another instance could not be read', { groupId, cause: String(err) }))
      .finally(() => {
        reading.delete(groupId);
        flush(groupId, true);
      });
  };
  /** A durable event, stored here or elsewhere: delivered here in sequence. */
  const durable = (groupId: string, seq: number, data: GroupEvent['data']) => {
    const at = last(groupId);
    if (at !== undefined && seq <= at) return;
    // The first this instance hears of the group (no stream of it opened here): taken as it is.
    if (at === undefined || seq === at + 1) {
      deliver(groupId, seq, data);
      return flush(groupId, false);
    }
    let waiting = early.get(groupId);
    if (!waiting) early.set(groupId, (waiting = new Map()));
    waiting.set(seq, data);
    readMissing(groupId);
  };
  cluster.useCodec(groupTopic(''), {
    // Only progress events are published through the bus; durable ones go through `publish` below.
    encode: (event) => wireProgress(event as GroupEvent),
    receive(topic, wire) {
      const groupId = topic.slice(groupTopic('').length);
      const w = wire as WireGroupEvent;
      if (w.s !== null) return durable(groupId, w.s, w.d);
      const at = w.at ?? { seq: 0, n: 0 };
      const event: GroupEvent = { seq: null, at, type: w.d.type, data: w.d, frame: encodeFrame(`${at.seq}.${at.n}`, JSON.stringify(w.d), deps.config.sseRetryMs) };
      keepForResume(deps, groupId, event);
      cluster.publishHere(topic, event);
    },
  });
  relays.set(deps.bus, {
    publish(groupId, ev) {
      cluster.sendOthers(groupTopic(groupId), { s: ev.seq, d: ev.data } satisfies WireGroupEvent);
      durable(groupId, ev.seq, ev.data);
    },
  });
  return {
    /** After a bus gap: every group followed here reads what it missed. */
    catchUp() {
      for (const groupId of countersOf(deps.bus).keys()) if (deps.bus.listenerCount(groupTopic(groupId))) readMissing(groupId);
    },
  };
}

/** A progress event as the other instances get it (see `attachGroupRelay`). */
export const wireProgress = (event: GroupEvent): WireGroupEvent => ({ s: null, at: event.at, d: event.data });

/**
 * Make sure the group has a progress counter before its first progress event (an answer starting):
 * normally the durable event it answers has just set it; on an app that published none for this
 * group yet, it starts from the group's stored last seq, read here (the store is asynchronous, so
 * `publishProgress` itself cannot read it).
 */
export async function seedProgressCounter(deps: AppDeps, groupId: string): Promise<void> {
  if (countersOf(deps.bus).has(groupId)) return;
  const seq = (await deps.store.read((tx) => findGroupById(tx, groupId)))?.lastSeq ?? 0;
  // A durable event published while this read ran set a newer one: keep it.
  if (!countersOf(deps.bus).has(groupId)) countersOf(deps.bus).set(groupId, { seq, n: 0 });
}

/**
 * A progress event: delivered live, never stored (a resuming client gets the final message instead).
 * Its counter is seeded beforehand (`seedProgressCounter`); without one (the group was deleted
 * meanwhile) it counts from 0, as for a group that is gone.
 */
export function publishProgress(deps: AppDeps, groupId: string, data: GroupEvent['data']): void {
  const counters = countersOf(deps.bus);
  let c = counters.get(groupId);
  if (!c) counters.set(groupId, (c = { seq: 0, n: 0 }));
  const at = { seq: c.seq, n: ++c.n };
  const event: GroupEvent = { seq: null, at, type: data.type, data, frame: encodeFrame(`${at.seq}.${at.n}`, JSON.stringify(data), deps.config.sseRetryMs) };
  keepForResume(deps, groupId, event);
  deps.bus.publish(groupTopic(groupId), event);
}

/**
 * The progress events of each answer still being written, per app and group, by the message they
 * answer: a client that reconnects mid-answer gets the deltas it missed (docs/realtime.md,
 * "Resume"), which the store does not have. An answer's go when its outcome is published.
 */
const answers = new WeakMap<Bus, Map<string, Map<string, GroupEvent[] | 'too long'>>>();
function answersOf(bus: Bus) {
  let m = answers.get(bus);
  if (!m) answers.set(bus, (m = new Map()));
  return m;
}

/**
 * Progress events one answer keeps for resume, at most. A group answer is bounded by the model's
 * answer length; this bounds the memory (~150 bytes a frame) of one that is not. Past it, the
 * answer's deltas are not replayed: a resume gets the live tail and the finished message.
 */
const MAX_REPLAYED_PER_ANSWER = 4096;

function keepForResume(deps: AppDeps, groupId: string, event: GroupEvent): void {
  const replyTo = event.data.replyTo;
  if (typeof replyTo !== 'string') return;
  const byGroup = answersOf(deps.bus);
  let group = byGroup.get(groupId);
  if (!group) byGroup.set(groupId, (group = new Map()));
  const kept = group.get(replyTo) ?? [];
  if (kept === 'too long') return;
  kept.push(event);
  group.set(replyTo, kept.length > MAX_REPLAYED_PER_ANSWER ? 'too long' : kept);
}

/** The answer to `replyTo` ended (or its follow-up crashed): its progress is no longer replayed. */
export function endAnswer(deps: AppDeps, groupId: string, replyTo: string): void {
  const group = answersOf(deps.bus).get(groupId);
  group?.delete(replyTo);
  if (group && !group.size) answersOf(deps.bus).delete(groupId);
}

/** Progress events of the answers being written after `after`, in order. */
export function progressAfter(deps: AppDeps, groupId: string, after: EventPosition): GroupEvent[] {
  const out: GroupEvent[] = [];
  for (const kept of answersOf(deps.bus).get(groupId)?.values() ?? []) if (kept !== 'too long') for (const e of kept) if (isAfter(e.at!, after)) out.push(e);
  return out.sort((a, b) => (isAfter(a.at!, b.at!) ? 1 : -1));
}
