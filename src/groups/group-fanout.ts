import type { Bus } from '../pubsub/bus';
import { groupTopic, type GroupEvent } from './group-events';

/**
 * Delivery of a group's events to its open streams, in batches.
 *
 * One bus listener per group with open streams, not one per stream. The events published during
 * one turn of the event loop (the commit queue publishes every message committed together at once)
 * are handed to every stream at the end of that turn as one batch, and a batch's frames are joined
 * into one chunk once, shared by every stream that takes the whole batch. Before, each stream
 * received each event and joined its own copy: with 100 streams, delivery cost as much server
 * CPU as the rest of sending a message (bench/RESULTS.md, change 21).
 *
 * Ending a turn early costs nothing: a batch goes out with `setImmediate`, after the turn's I/O,
 * never on a timer.
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

export const joinFrames = (frames: readonly Uint8Array[]): Uint8Array => (frames.length === 1 ? frames[0]! : Buffer.concat(frames));
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
  unsubscribe: () => void;
}

export function createGroupFanout(bus: Bus, onMemberError: (groupId: string, err: unknown) => void = () => {}): GroupFanout {
  const hubs = new Map<string, Hub>();

  const flush = (groupId: string, hub: Hub) => {
    hub.scheduled = false;
    if (!hub.pending.length) return;
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
    const hub: Hub = { members: new Set(), pending: [], scheduled: false, unsubscribe: () => {} };
    hub.unsubscribe = bus.subscribe<GroupEvent>(groupTopic(groupId), (ev) => {
      hub.pending.push(ev);
      if (hub.scheduled) return;
      hub.scheduled = true;
      setImmediate(flush, groupId, hub);
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
