import type { AppDeps } from '../deps';
import type { GroupChat } from '../db/schema';
import { listGroupEventsAfter } from './group-events.store';
import { encodeFrame, groupTopic, type GroupEvent } from './group-events';

const encoder = new TextEncoder();
const OPEN = encoder.encode(': open\n\n');
const HEARTBEAT = encoder.encode(': heartbeat\n\n');

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // nginx and friends must not buffer a live stream.
  'x-accel-buffering': 'no',
} as const;

/**
 * Event ids are the group's sequence numbers in decimal, `<seq>.<n>` for progress events (resume
 * from those replays after `seq`); anything else is ignored (live tail only).
 */
export function parseEventId(raw: string | undefined): number | undefined {
  const m = raw ? /^(\d{1,15})(?:\.\d{1,15})?$/.exec(raw) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * The realtime stream of one group for one member, as a raw Response so that every subscriber
 * shares the one encoded frame of each event and so that the read-side backlog is visible.
 *
 * Order of work, which is what makes resume gap-free and duplicate-free:
 * subscribe to the bus first (events arriving meanwhile wait in `pending`), replay the stored
 * events after `Last-Event-ID`, then flush `pending`, dropping every id already sent.
 *
 * A subscriber that stops reading piles frames up in the stream's queue; past
 * `PARLEY_SSE_BUFFER_EVENTS` it is cut off (its queue is dropped at once, the socket follows) so
 * it never slows the publisher or holds memory. The client resumes with `Last-Event-ID`.
 */
export function openGroupStream(deps: AppDeps, opts: { group: GroupChat; userId: string; lastEventId?: string; release: () => void }): Response {
  const { bus, config, log } = deps;
  const { group, userId } = opts;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let lastSent = Number.NEGATIVE_INFINITY;
  let pending: GroupEvent[] | undefined = [];
  let done = false;
  let quiet = true;
  let unsubscribe = () => {};
  let heartbeat: ReturnType<typeof setInterval> | undefined;

  const finish = () => {
    if (done) return false;
    done = true;
    unsubscribe();
    clearInterval(heartbeat);
    opts.release();
    return true;
  };
  // With the default strategy (high-water mark 1), desiredSize = 1 - queued chunks.
  const backlog = () => 1 - (controller.desiredSize ?? 1);

  const deliver = (ev: GroupEvent) => {
    if (done) return;
    if (pending) return void pending.push(ev);
    if (ev.seq !== null) {
      if (ev.seq <= lastSent) return;
      lastSent = ev.seq;
    }
    if (backlog() >= config.sseBufferEvents) {
      finish();
      log.warn('slow group subscriber disconnected', { groupId: group.id, userId, buffered: backlog() });
      controller.error(new Error('subscriber too slow'));
      return;
    }
    controller.enqueue(ev.frame);
    quiet = false;
    // The group is gone, or this user left it: the stream has nothing more to say to them.
    if (ev.type === 'group.deleted' || (ev.type === 'member.left' && (ev.data.member as { id?: string })?.id === userId)) {
      finish();
      controller.close();
    }
  };

  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      unsubscribe = bus.subscribe<GroupEvent>(groupTopic(group.id), deliver);
      // One chunk for the opening comment and the whole replay: the head goes out at once, and
      // a long replay counts as one buffered item, not as a slow reader.
      let head = ': open\n\n';
      const after = parseEventId(opts.lastEventId);
      if (after !== undefined) {
        // An id beyond this group's history (an older backup restored, another group's id):
        // nothing to replay, and everything from now on is new to this client.
        const unknown = after > group.lastSeq;
        const from = unknown ? group.lastSeq : after;
        const rows = unknown ? [] : listGroupEventsAfter(deps.db, group.id, after);
        const gap = !unknown && (rows.length ? rows[0]!.seq > after + 1 : group.lastSeq > after);
        if (unknown || gap) {
          // Say so, so the client reloads with listMessages instead of trusting a partial replay.
          const data = { type: 'stream.reset', reason: unknown ? 'unknown_event_id' : 'events_expired' };
          head += new TextDecoder().decode(encodeFrame(String(from), JSON.stringify(data), config.sseRetryMs));
        }
        for (const row of rows) head += `event: message\nid: ${row.seq}\nretry: ${config.sseRetryMs}\ndata: ${row.data}\n\n`;
        lastSent = rows.length ? rows[rows.length - 1]!.seq : from;
      }
      c.enqueue(head === ': open\n\n' ? OPEN : encoder.encode(head));
      const queued = pending!;
      pending = undefined;
      for (const ev of queued) deliver(ev);
      heartbeat = setInterval(() => {
        if (done) return;
        if (quiet && backlog() <= 0) controller.enqueue(HEARTBEAT);
        quiet = true;
      }, config.sseHeartbeatSeconds * 1000);
    },
    cancel() {
      finish();
    },
  });
  return new Response(stream, { headers: SSE_HEADERS });
}
