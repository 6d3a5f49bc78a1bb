import type { AppDeps } from '../deps';
import { frameOf, type EventLog, type LiveEvent, type RowState } from './event-log';
import { newId } from '../ids';
import type { Beating } from '../http/heartbeat-ticker';
import { rawChunk, sseComment } from '../http/sse';
import { onAbort } from '../http/stream-guard';

const PING = sseComment('ping');

/** Parse `<responseId>:<seq>` (a frame id). */
export function parseEventId(id: string): { responseId: string; seq: number } | undefined {
  const at = id.lastIndexOf(':');
  if (at <= 0) return undefined;
  const seq = Number(id.slice(at + 1));
  return Number.isInteger(seq) && seq >= 0 ? { responseId: id.slice(0, at), seq } : undefined;
}

/**
 * A one-frame stream carrying an `error` event that belongs to no stored response. It still has
 * an id (of a response that was never made), so every data frame but keepalives carries one.
 */
export async function* errorOnlyStream(message: string) {
  yield rawChunk(frameOf(newId(), 1, JSON.stringify({ type: 'error', message })));
}

/**
 * The last frame of a finished response whose own last event is not stored, built from its row:
 * retention pruned it, or the event log refused it (src/chat/respond.ts then keeps the number it
 * would have had as the row's `lastSeq`). Undefined when the stream already sent that far.
 */
function endFromRow(log: EventLog, responseId: string, row: RowState, sent: number): ReturnType<typeof rawChunk> | undefined {
  if (row.lastSeq <= sent) return undefined;
  return rawChunk(log.format.frame(responseId, row.lastSeq, row.ending));
}

/** Frames per chunk when replaying: bounds the size of one write for a long backlog. */
const REPLAY_CHUNK = 1000;

/**
 * Follow a response's events after `afterSeq`: subscribe to the live tail first, then replay
 * what is stored, then relay the tail, dropping anything already sent (by sequence number), so a
 * reconnecting client sees every event exactly once. Ends after `done`/`error`. Frames of one
 * batch go out as one chunk. Quiet periods carry comment lines and keepalive frames, paced by
 * the server's shared heartbeat ticker (PARLEY_SSE_HEARTBEAT_S) like the group streams: at a
 * tick, a stream that sent nothing during the whole interval before it sends a comment line, or a
 * keepalive frame once it has been quiet for PARLEY_STREAM_KEEPALIVE_S.
 */
export async function* followResponse(deps: AppDeps, responseId: string, afterSeq: number, client?: AbortSignal, log: EventLog = deps.events) {
  const { format } = log;
  const keepalive = format.keepalive === undefined ? undefined : rawChunk(format.keepalive);
  let queue: LiveEvent[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = log.subscribe(responseId, (batch) => {
    for (const e of batch) queue.push(e);
    wake?.();
  });
  // Events from another instance may have been lost on the way (src/pubsub/bus.ts, onGap): read
  // them from the database before the next live ones.
  let missed = false;
  const offGap = deps.bus.onGap(() => {
    missed = true;
    wake?.();
  });
  const storedAfter = (after: number) =>
    deps.store
      .read((tx) => format.eventsAfter(tx, responseId, after))
      .then((rows) => rows.map((e) => ({ seq: e.seq, frame: format.frame(responseId, e.seq, e.data), terminal: format.terminal(e.data) })));
  const stateOf = () => deps.store.read((tx) => format.state(tx, responseId));
  const keepaliveMs = deps.config.streamKeepaliveS * 1000;
  let ticked = false;
  let stopListening: (() => void) | undefined;
  const beating: Beating = {
    beat() {
      ticked = true;
      wake?.();
    },
  };
  try {
    let last = afterSeq;
    let ended = false;
    const stored = await deps.store.read((tx) => format.eventsAfter(tx, responseId, afterSeq));
    if (stored.length) {
      let chunk = '';
      let inChunk = 0;
      for (const e of stored) {
        chunk += format.frame(responseId, e.seq, e.data);
        last = e.seq;
        if (format.terminal(e.data)) {
          ended = true;
          break;
        }
        if (++inChunk === REPLAY_CHUNK) {
          yield rawChunk(chunk);
          chunk = '';
          inChunk = 0;
        }
      }
      if (chunk) yield rawChunk(chunk);
    }
    if (ended) return;
    // Nothing more will come for a finished response whose last event was pruned or never written:
    // the row tells how it ended.
    const row = await stateOf();
    if (!row || (row.ended && !deps.tasks.isRunning(responseId))) {
      if (row && row.lastSeq > last) {
        // It ended between the replay and this read (on another instance): the rest is stored.
        const rest = await storedAfter(last);
        const end = rest.findIndex((e) => e.terminal);
        if (end >= 0) {
          yield rawChunk(rest.slice(0, end + 1).map((e) => e.frame).join(''));
          return;
        }
      }
      const end = row && endFromRow(log, responseId, row, last);
      if (end) yield end;
      else if (!stored.length) yield sseComment('end');
      return;
    }
    if (!stored.length) yield sseComment('open');
    let quietSince = Date.now();
    // The opening counts as traffic: the first heartbeat comes after at least one whole interval.
    let sentSinceTick = true;
    deps.heartbeats.add(beating);
    // At shutdown (the ticker stops) or when the client leaves, a stream waiting for its next event
    // must reach its `finally` now, not at its next event or tick: the stream guard has already
    // ended the response, and the subscription would linger until then.
    const signals = [deps.lifecycle.signal, ...(client ? [client] : [])];
    const stop = () => wake?.();
    const offs = signals.map((signal) => onAbort(signal, stop));
    stopListening = () => offs.forEach((off) => off());
    const over = () => signals.some((signal) => signal.aborted);
    while (true) {
      if (missed) {
        missed = false;
        queue = [...(await storedAfter(last)), ...queue];
      }
      if (!queue.length && !ticked && !missed) {
        if (over()) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        if (over()) return;
      }
      if (!queue.length) {
        // Woken by a tick. A response that ended while this stream was not told (its last event
        // was not stored, and its publish missed this subscription) ends its followers here.
        ticked = false;
        if (!deps.tasks.isRunning(responseId)) {
          const current = await stateOf();
          if (current && current.ended && current.lastSeq > last) {
            // Ended, and this stream has not sent all of it: the turn ran on another instance
            // whose last events are still on their way, or were lost. They are stored: send them.
            const rest = await storedAfter(last);
            if (rest.some((e) => e.terminal)) {
              queue = [...rest, ...queue];
              continue;
            }
          }
          if (!current || current.ended) {
            yield (current && endFromRow(log, responseId, current, last)) || sseComment('end');
            return;
          }
        }
        if (sentSinceTick) sentSinceTick = false;
        else if (keepalive && Date.now() - quietSince >= keepaliveMs) {
          quietSince = Date.now();
          yield keepalive;
        } else yield PING;
        continue;
      }
      const batch = queue;
      queue = [];
      let chunk = '';
      for (const e of batch) {
        if (e.seq <= last) continue;
        chunk += e.frame;
        last = e.seq;
        if (e.terminal) {
          ended = true;
          break;
        }
      }
      quietSince = Date.now();
      sentSinceTick = true;
      if (chunk) yield rawChunk(chunk);
      if (ended) return;
    }
  } finally {
    stopListening?.();
    deps.heartbeats.remove(beating);
    offGap();
    unsubscribe();
  }
}
