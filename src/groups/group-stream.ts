import type { AppDeps } from '../deps';
import type { Beating } from '../http/heartbeat-ticker';
import type { GroupChat } from '../db/schema';
import { listGroupEventsAfter } from './group-events.store';
import { joinFrames, type FanoutBatch, type FanoutMember, type Membership } from './group-fanout';
import { messageFrame } from '../http/sse';

const encoder = new TextEncoder();
const OPEN = encoder.encode(': open\n\n');
const HEARTBEAT = encoder.encode(': heartbeat\n\n');

/**
 * Event ids are the group's sequence numbers in decimal, `<seq>.<n>` for progress events (resume
 * from those replays after `seq`); anything else is ignored (live tail only).
 */
export function parseEventId(raw: string | undefined): number | undefined {
  const m = raw ? /^(\d{1,15})(?:\.\d{1,15})?$/.exec(raw) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * The realtime stream of one group for one member: an async iterator of encoded frames. The
 * operation layer wraps it (src/http/stream-guard.ts: per-user stream cap, final frame at
 * shutdown, immediate end when the client leaves) and Elysia pulls one chunk per socket write
 * (all the frames waiting, joined), so a reader's backlog shows up here, in `queue`.
 *
 * Events come from the group's fan-out (src/groups/group-fanout.ts) in batches, one per turn of
 * the event loop, and a stream that takes a whole batch takes the chunk joined once for all.
 *
 * Order of work, which is what makes resume gap-free and duplicate-free: join the fan-out first
 * (events published meanwhile wait in its next batch), replay the stored events after
 * `Last-Event-ID`, then take batches, dropping every id already sent.
 *
 * A subscriber that stops reading piles events up in `queue`; past `PARLEY_SSE_BUFFER_EVENTS` it
 * is cut off (the queue is dropped at once and the stream ends) so it never slows the others or
 * holds memory. The client resumes with `Last-Event-ID`.
 */
export class GroupStream implements AsyncIterableIterator<Uint8Array>, Beating, FanoutMember {
  private queue: Uint8Array[] = [];
  /** Events in `queue` (a chunk carries one or many; the opening and its replay count as one). */
  private waiting = 0;
  private lastSent = Number.NEGATIVE_INFINITY;
  /** No more frames will be queued; the stream ends once `queue` is drained. */
  private closing = false;
  private finished = false;
  /** Nothing queued since the previous heartbeat tick. The opening counts as traffic, so a new
   * stream's first heartbeat comes after at least one whole interval. */
  private quiet = false;
  private wake: (() => void) | undefined;
  private readonly membership: Membership;
  /** Events of the next batch published before this stream joined. */
  private skip: number;

  constructor(
    private readonly deps: AppDeps,
    private readonly group: GroupChat,
    private readonly userId: string,
    lastEventId: string | undefined,
  ) {
    this.membership = deps.groupFanout.join(group.id, this);
    this.skip = this.membership.skip;
    // One chunk for the opening comment and the whole replay: the head goes out at once, and
    // a long replay counts as one queued frame, not as a slow reader.
    this.push(this.head(parseEventId(lastEventId)), 1);
    // The app's shared ticker, not a timer per stream (bench figure 3).
    deps.heartbeats.add(this);
  }

  /** A tick of the shared ticker: quiet for the whole interval and nothing waiting → heartbeat. */
  beat() {
    if (this.quiet && this.queue.length === 0 && !this.closing) this.push(HEARTBEAT, 0);
    this.quiet = true;
  }

  private head(after: number | undefined): Uint8Array {
    if (after === undefined) return OPEN;
    const { db, config } = this.deps;
    const group = this.group;
    let head = ': open\n\n';
    // An id beyond this group's history (an older backup restored, another group's id):
    // nothing to replay, and everything from now on is new to this client.
    const unknown = after > group.lastSeq;
    const from = unknown ? group.lastSeq : after;
    const rows = unknown ? [] : listGroupEventsAfter(db, group.id, after);
    const gap = !unknown && (rows.length ? rows[0]!.seq > after + 1 : group.lastSeq > after);
    if (unknown || gap) {
      // Say so, so the client reloads with listMessages instead of trusting a partial replay.
      const data = { type: 'stream.reset', reason: unknown ? 'unknown_event_id' : 'events_expired' };
      head += messageFrame(JSON.stringify(data), String(from), config.sseRetryMs);
    }
    for (const row of rows) head += messageFrame(row.data, String(row.seq), config.sseRetryMs);
    this.lastSent = rows.length ? rows[rows.length - 1]!.seq : from;
    return encoder.encode(head);
  }

  private push(chunk: Uint8Array, events: number) {
    this.queue.push(chunk);
    this.waiting += events;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** A batch from the fan-out: the events of it this stream has not sent yet, up to its own end. */
  receive(batch: FanoutBatch) {
    if (this.closing) return;
    const { events } = batch;
    const start = this.skip;
    this.skip = 0;
    // events[start, end) go out as they are, unless one must be dropped: then `kept` lists them.
    let end = start;
    let kept: Uint8Array[] | undefined;
    let last = false;
    for (let i = start; i < events.length && !last; i++) {
      const ev = events[i]!;
      if (ev.seq !== null) {
        // Committed before the replay read it, published after: already sent.
        if (ev.seq <= this.lastSent) {
          kept ??= events.slice(start, i).map((e) => e.frame);
          continue;
        }
        this.lastSent = ev.seq;
      }
      if (kept) kept.push(ev.frame);
      else end = i + 1;
      // The group is gone, or this user left it: the stream has nothing more to say to them.
      last = ev.type === 'group.deleted' || (ev.type === 'member.left' && (ev.data.member as { id?: string } | undefined)?.id === this.userId);
    }
    const count = kept ? kept.length : end - start;
    if (count > 0) {
      if (this.waiting >= this.deps.config.sseBufferEvents) {
        this.deps.log.warn('slow group subscriber disconnected', { groupId: this.group.id, userId: this.userId, buffered: this.waiting });
        this.queue = [];
        this.waiting = 0;
        return this.stop();
      }
      this.quiet = false;
      this.push(kept ? joinFrames(kept) : batch.frames(start, end), count);
    }
    if (last) this.stop();
  }

  /** Take no more events; the frames already queued still go out. */
  private stop() {
    if (this.closing) return;
    this.closing = true;
    this.membership.leave();
    this.deps.heartbeats.remove(this);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    for (;;) {
      // Everything waiting goes out in one socket write: messages committed together (the
      // commit queue publishes a batch at once) cost each subscriber one write, not one each.
      if (this.queue.length) {
        const frames = this.queue;
        this.queue = [];
        this.waiting = 0;
        return { done: false, value: joinFrames(frames) };
      }
      if (this.closing || this.finished) return this.return();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    this.finished = true;
    this.queue = [];
    this.waiting = 0;
    this.stop();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

export const openGroupStream = (deps: AppDeps, opts: { group: GroupChat; userId: string; lastEventId?: string }) =>
  new GroupStream(deps, opts.group, opts.userId, opts.lastEventId);
