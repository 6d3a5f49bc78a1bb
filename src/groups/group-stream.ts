import type { AppDeps } from '../deps';
import { listGroupEventsAfter } from './group-events.store';
import { findGroupForUser } from './group.store';
import { isAfter, noteGroupOpened, progressAfter, type EventPosition } from './group-events';
import type { FanoutBatch, FanoutMember, Membership } from './group-fanout';
import { joinFrames, messageFrame } from '../http/sse';
import { PushStream, type StopReason, type StreamWriter } from '../http/push-stream';

const encoder = new TextEncoder();
const OPEN = encoder.encode(': open\n\n');

/**
 * Event ids are the group's sequence numbers in decimal, `<seq>.<n>` for progress events (resume
 * from those replays the stored events after `seq` and the progress after `<seq>.<n>`); anything
 * else is ignored (live tail only).
 */
export function parseEventId(raw: string | undefined): EventPosition | undefined {
  const m = raw ? /^(\d{1,15})(?:\.(\d{1,15}))?$/.exec(raw) : null;
  return m ? { seq: Number(m[1]), n: m[2] ? Number(m[2]) : 0 } : undefined;
}

/**
 * The realtime stream of one group for one member. A push stream (src/http/push-stream.ts): the
 * operation layer makes the response, and the group's fan-out (src/groups/group-fanout.ts) hands
 * it the group's events in batches (at the end of a turn of the event loop, at most every
 * `PARLEY_GROUP_BATCH_MS`), which it writes to the socket there and then. A stream that takes a
 * whole batch writes the chunk joined once for all. The writer keeps what a client that does not
 * read leaves waiting, and cuts it off past `PARLEY_SSE_BUFFER_EVENTS`; the client resumes with
 * `Last-Event-ID`.
 *
 * Order of work, which is what makes resume gap-free and duplicate-free: join the fan-out first
 * (events published meanwhile wait in its next batch), then read the membership, the group's last
 * seq and the stored events after `Last-Event-ID` (`open`, awaited by the handler, so a failed
 * read is the request's error), then take batches, dropping every id already sent. Batches that
 * come while the read runs, or before the response exists, wait for `start`.
 */
export class GroupStream extends PushStream implements FanoutMember {
  private out: StreamWriter | undefined;
  /** The last event sent, durable or progress: anything at or before it is not sent again. */
  private lastSent: EventPosition = { seq: Number.NEGATIVE_INFINITY, n: 0 };
  /** No more events are taken. */
  private closing = false;
  private membership: Membership | undefined;
  /** Events of the next batch published before this stream joined. */
  private skip = 0;
  /** The opening comment and the whole replay, made by `open`. */
  private opening: Uint8Array = OPEN;
  /** Batches received before `start`, taken then, in order. */
  private early: FanoutBatch[] | undefined = [];

  constructor(
    private readonly deps: AppDeps,
    private readonly groupId: string,
    private readonly userId: string,
    private readonly lastEventId: string | undefined,
  ) {
    super();
  }

  /**
   * Join the group's fan-out, then check that the user is a member and read what to replay. False
   * (and out of the fan-out again) when they are not a member or there is no such group.
   */
  async open(): Promise<boolean> {
    this.membership = this.deps.groupFanout.join(this.groupId, this);
    this.skip = this.membership.skip;
    const position = parseEventId(this.lastEventId);
    const { groupId, userId } = this;
    try {
      const read = await this.deps.store.read(function* (tx) {
        const found = yield* findGroupForUser(tx, groupId, userId);
        if (!found?.isMember) return undefined;
        // The last seq before the events: one committed between the two reads is then replayed,
        // never taken for a gap.
        const lastSeq = found.group.lastSeq;
        const replay = position !== undefined && position.seq <= lastSeq;
        return { lastSeq, rows: replay ? yield* listGroupEventsAfter(tx, groupId, position.seq) : [] };
      });
      if (!read) {
        this.leave();
        return false;
      }
      // From here on, the group's events are delivered on this instance in sequence after it.
      noteGroupOpened(this.deps, groupId, read.lastSeq);
      if (position !== undefined) this.opening = this.head(position, read.lastSeq, read.rows);
      return true;
    } catch (err) {
      // The handler answers the error: nothing may stay in the fan-out.
      this.leave();
      throw err;
    }
  }

  start(out: StreamWriter) {
    this.out = out;
    // One chunk for the opening comment and the whole replay: the head goes out at once, and
    // a long replay counts as one waiting event, not as a slow reader.
    out.write(this.opening, 1);
    const early = this.early ?? [];
    this.early = undefined;
    for (const batch of early) this.receive(batch);
  }

  private head(position: EventPosition, lastSeq: number, rows: { seq: number; data: string }[]): Uint8Array {
    const after = position.seq;
    const { config } = this.deps;
    let head = ': open\n\n';
    // An id beyond this group's history (an older backup restored, another group's id):
    // nothing to replay, and everything from now on is new to this client.
    const unknown = after > lastSeq;
    const from = unknown ? lastSeq : after;
    const gap = !unknown && (rows.length ? rows[0]!.seq > after + 1 : lastSeq > after);
    if (unknown || gap) {
      // Say so, so the client reloads with listMessages instead of trusting a partial replay.
      const data = { type: 'stream.reset', reason: unknown ? 'unknown_event_id' : 'events_expired' };
      head += messageFrame(JSON.stringify(data), String(from), config.sseRetryMs);
    }
    // The stored events and, between them, the deltas of answers still being written (kept in
    // memory, group-events.ts), merged in the order they were published.
    const progress = unknown ? [] : progressAfter(this.deps, this.groupId, position);
    this.lastSent = unknown ? { seq: from, n: 0 } : position;
    const frames: Uint8Array[] = [];
    let p = 0;
    const sendProgressUpTo = (limit: EventPosition) => {
      for (; p < progress.length && !isAfter(progress[p]!.at!, limit); p++) frames.push(progress[p]!.frame);
    };
    for (const row of rows) {
      sendProgressUpTo({ seq: row.seq, n: 0 });
      frames.push(encoder.encode(messageFrame(row.data, String(row.seq), config.sseRetryMs)));
      this.lastSent = { seq: row.seq, n: 0 };
    }
    sendProgressUpTo({ seq: Number.POSITIVE_INFINITY, n: 0 });
    if (p > 0) this.lastSent = maxPosition(this.lastSent, progress[p - 1]!.at!);
    return joinFrames([encoder.encode(head), ...frames]);
  }

  /** A batch from the fan-out: the events of it this stream has not sent yet, up to its own end. */
  receive(batch: FanoutBatch) {
    if (this.closing) return;
    if (this.early) return void this.early.push(batch);
    const { events } = batch;
    const start = this.skip;
    this.skip = 0;
    // events[start, end) go out as they are, unless one must be dropped: then `kept` lists them.
    let end = start;
    let kept: Uint8Array[] | undefined;
    let last = false;
    for (let i = start; i < events.length && !last; i++) {
      const ev = events[i]!;
      const at = ev.at ?? (ev.seq !== null ? { seq: ev.seq, n: 0 } : undefined);
      if (at) {
        // Committed (or kept for resume) before the replay read it, published after: already sent.
        if (!isAfter(at, this.lastSent)) {
          kept ??= events.slice(start, i).map((e) => e.frame);
          continue;
        }
        this.lastSent = at;
      }
      if (kept) kept.push(ev.frame);
      else end = i + 1;
      // The group is gone, or this user left it: the stream has nothing more to say to them.
      last = ev.type === 'group.deleted' || (ev.type === 'member.left' && (ev.data.member as { id?: string } | undefined)?.id === this.userId);
    }
    const count = kept ? kept.length : end - start;
    if (count > 0) this.out!.write(kept ? joinFrames(kept) : batch.frames(start, end), count);
    if (last && !this.closing) {
      this.leave();
      this.out!.end();
    }
  }

  stop(why: StopReason) {
    if (why.reason === 'slow-reader')
      this.deps.log.warn('slow group subscriber disconnected', { groupId: this.groupId, userId: this.userId, buffered: why.buffered });
    this.leave();
  }

  /** Take no more events. */
  private leave() {
    this.closing = true;
    this.membership?.leave();
  }
}

/** The stream of `groupId` for `userId`, open (see `GroupStream.open`); undefined when they are not a member of it. */
export async function openGroupStream(deps: AppDeps, opts: { groupId: string; userId: string; lastEventId?: string }): Promise<GroupStream | undefined> {
  const stream = new GroupStream(deps, opts.groupId, opts.userId, opts.lastEventId);
  return (await stream.open()) ? stream : undefined;
}

const maxPosition = (a: EventPosition, b: EventPosition) => (isAfter(b, a) ? b : a);
