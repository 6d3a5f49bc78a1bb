import type { Bus } from '../pubsub/bus';
import { groupTopic, type GroupEvent } from './group-events';
import { joinFrames } from '../http/sse';

/**
 * Delivery of a group's events to its open streams, in batches.
 *
 * One bus listener per group with open streams, not one per stream. The events published during
 * one turn of the event loop (the commit queue publishes every message committed together at once)
 * are handed to every stream as one batch, and a batch's frames are joined into one chunk once,
 * shared by every stream that takes the whole batch. Before, each stream received each event and
 * joined its own copy: with 100 streams, delivery cost as much server CPU as the rest of sending
 * a message (bench/RESULTS.md, changes 21–23).
 *
 * When a batch goes: at the end of the turn (`setImmediate`) when the group's previous batch went
 * out at least `batchMs` ago, else `batchMs` after it. A quiet group's event goes at once; a
 * busy group's go out at most every `batchMs`, fewer and larger socket writes per stream (each
 * write to a socket costs the same few microseconds of kernel time whatever it carries).
 */
/** A stream of one group: takes the batches, keeps what is its own (src/groups/group-stream.ts). */
export interface FanoutMember {
  receive(batch: FanoutBatch): void;
}

export class FanoutBatch {
  private joined: Uint8Array | undefined;

  constructor(readonly events: readonly GroupEvent[]) {}

  /** The frames of `events[from, to)` as one chunk. The whole batch is joined once, for every stream. */
  frames(from = 0, to = this.events.length): Uint8Array {
    if (to - from === 1) return this.events[from]!.frame;
    if (from === 0 && to === this.events.length) return (this.joined ??= join(this.events));
    return join(this.events.slice(from, to));
  }
}

const join = (events: readonly GroupEvent[]) => joinFrames(events.map((e) => e.frame));

export interface Membership {
  /**
   * Events of the current batch published before the member joined: not its own (it did not
   * subscribe yet). They are the first `skip` of the next batch it receives.
   */
  skip: number;
  /** Leave the group's fan-out; calling it twice is harmless. */
  leave(): void;
}

export interface GroupFanout {
  join(groupId: string, member: FanoutMember): Membership;
  /** Streams open on a group now (tests check that closed streams leave). */
  members(groupId: string): number;
}

interface Hub {
  members: Set<FanoutMember>;
  pending: GroupEvent[];
  scheduled: boolean;
  /** When the previous batch went out (`performance.now()`). */
  sentAt: number;
  unsubscribe: () => void;
}

export interface FanoutOptions {
  /** The shortest time between two batches of one group (PARLEY_GROUP_BATCH_MS); 0: every turn. */
  batchMs: number;
  onMemberError?: (groupId: string, err: unknown) => void;
}

export function createGroupFanout(bus: Bus, { batchMs, onMemberError = () => {} }: FanoutOptions): GroupFanout {
  const hubs = new Map<string, Hub>();

  const flush = (groupId: string, hub: Hub) => {
    hub.scheduled = false;
    if (!hub.pending.length) return;
    hub.sentAt = performance.now();
    const batch = new FanoutBatch(hub.pending);
    hub.pending = [];
    // A member may leave while it receives (its group was deleted, it left it): deleting the
    // entry being visited from a Set is safe, so no snapshot is copied per batch.
    for (const member of hub.members) {
      try {
        member.receive(batch);
      } catch (err) {
        // One broken stream must never cost the others their events.
        onMemberError(groupId, err);
      }
    }
  };

  const open = (groupId: string): Hub => {
    const hub: Hub = { members: new Set(), pending: [], scheduled: false, sentAt: Number.NEGATIVE_INFINITY, unsubscribe: () => {} };
    hub.unsubscribe = bus.subscribe<GroupEvent>(groupTopic(groupId), (ev) => {
      hub.pending.push(ev);
      if (hub.scheduled) return;
      hub.scheduled = true;
      const wait = batchMs - (performance.now() - hub.sentAt);
      if (wait <= 0) setImmediate(flush, groupId, hub);
      else setTimeout(flush, wait, groupId, hub);
    });
    hubs.set(groupId, hub);
    return hub;
  };

  return {
    join(groupId, member) {
      const hub = hubs.get(groupId) ?? open(groupId);
      hub.members.add(member);
      return {
        skip: hub.pending.length,
        leave() {
          if (!hub.members.delete(member) || hub.members.size) return;
          // The last stream left: the group's events go nowhere until someone subscribes again
          // (a pending batch, if any, finds nobody).
          hub.unsubscribe();
          if (hubs.get(groupId) === hub) hubs.delete(groupId);
        },
      };
    },
    members: (groupId) => hubs.get(groupId)?.members.size ?? 0,
  };
}
