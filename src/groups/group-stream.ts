import type { AppDeps } from '../deps';
import type { Beating } from '../http/heartbeat-ticker';
import type { GroupChat } from '../db/schema';
import { listGroupEventsAfter } from './group-events.store';
import { groupTopic, type GroupEvent } from './group-events';
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
 * Order of work, which is what makes resume gap-free and duplicate-free:
 * subscribe to the bus first (events arriving meanwhile wait in `pending`), replay the stored
 * events after `Last-Event-ID`, then flush `pending`, dropping every id already sent.
 *
 * Every subscriber yields the same encoded bytes of an event. A subscriber that stops reading
 * piles frames up in `queue`; past `PARLEY_SSE_BUFFER_EVENTS` it is cut off (the queue is
 * dropped at once and the stream ends) so it never slows the publisher or holds memory. The
 * client resumes with `Last-Event-ID`.
 */
export class GroupStream implements AsyncIterableIterator<Uint8Array>, Beating {
  private queue: Uint8Array[] = [];
  private pending: GroupEvent[] | undefined = [];
  private lastSent = Number.NEGATIVE_INFINITY;
  /** No more frames will be queued; the stream ends once `queue` is drained. */
  private closing = false;
  private finished = false;
  /** Nothing queued since the previous heartbeat tick. The opening counts as traffic, so a new
   * stream's first heartbeat comes after at least one whole interval. */
  private quiet = false;
  private wake: (() => void) | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly deps: AppDeps,
    private readonly group: GroupChat,
    private readonly userId: string,
    lastEventId: string | undefined,
  ) {
    this.unsubscribe = deps.bus.subscribe<GroupEvent>(groupTopic(group.id), (ev) => this.deliver(ev));
    // One chunk for the opening comment and the whole replay: the head goes out at once, and
    // a long replay counts as one queued frame, not as a slow reader.
    this.queue.push(this.head(parseEventId(lastEventId)));
    const queued = this.pending!;
    this.pending = undefined;
    for (const ev of queued) this.deliver(ev);
    // The app's shared ticker, not a timer per stream (bench figure 3).
    if (!this.closing) deps.heartbeats.add(this);
  }

  /** A tick of the shared ticker: quiet for the whole interval and nothing waiting → heartbeat. */
  beat() {
    if (this.quiet && this.queue.length === 0 && !this.closing) this.push(HEARTBEAT);
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

  private push(frame: Uint8Array) {
    this.queue.push(frame);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private deliver(ev: GroupEvent) {
    if (this.closing) return;
    if (this.pending) return void this.pending.push(ev);
    if (ev.seq !== null) {
      if (ev.seq <= this.lastSent) return;
      this.lastSent = ev.seq;
    }
    if (this.queue.length >= this.deps.config.sseBufferEvents) {
      this.deps.log.warn('slow group subscriber disconnected', { groupId: this.group.id, userId: this.userId, buffered: this.queue.length });
      this.queue = [];
      this.stop();
      return;
    }
    this.quiet = false;
    this.push(ev.frame);
    // The group is gone, or this user left it: the stream has nothing more to say to them.
    if (ev.type === 'group.deleted' || (ev.type === 'member.left' && (ev.data.member as { id?: string } | undefined)?.id === this.userId)) this.stop();
  }

  /** Take no more events; the frames already queued still go out. */
  private stop() {
    if (this.closing) return;
    this.closing = true;
    this.unsubscribe();
    this.deps.heartbeats.remove(this);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    for (;;) {
      // Everything waiting goes out in one socket write: messages committed together (the
      // commit queue publishes a batch at once) cost each subscriber one write, not one each.
      if (this.queue.length > 1) {
        const frames = this.queue;
        this.queue = [];
        return { done: false, value: Buffer.concat(frames) };
      }
      const frame = this.queue.shift();
      if (frame) return { done: false, value: frame };
      if (this.closing || this.finished) return this.return();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    this.finished = true;
    this.queue = [];
    this.stop();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

export const openGroupStream = (deps: AppDeps, opts: { group: GroupChat; userId: string; lastEventId?: string }) =>
  new GroupStream(deps, opts.group, opts.userId, opts.lastEventId);
