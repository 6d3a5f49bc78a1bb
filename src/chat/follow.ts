import type { AppDeps } from '../deps';
import { findResponseById, isTerminal } from './response.store';
import { frameOf, isTerminalData, type LiveEvent } from './event-log';
import { newId } from '../ids';

/** SSE comment lines at least this often (and twice per keepalive): Bun's idle timer (10 s by default) and proxies never fire. */
const COMMENT_EVERY_MS = 5_000;
const KEEPALIVE_FRAME = 'event: message\ndata: {"type":"keepalive"}\n\n';

/** A chunk Elysia writes verbatim (`toSSE`); `sse: true` makes the first one set text/event-stream. */
export const rawChunk = (text: string) => ({ sse: true, toSSE: () => text });

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

/** Frames per chunk when replaying: bounds the size of one write for a long backlog. */
const REPLAY_CHUNK = 1000;

/**
 * Follow a response's events after `afterSeq`: subscribe to the live tail first, then replay
 * what is stored, then relay the tail, dropping anything already sent (by sequence number), so a
 * reconnecting client sees every event exactly once. Ends after `done`/`error`. Frames of one
 * batch go out as one chunk. Quiet periods carry comment lines and keepalive frames.
 */
export async function* followResponse(deps: AppDeps, responseId: string, afterSeq: number) {
  let queue: LiveEvent[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = deps.events.subscribe(responseId, (batch) => {
    for (const e of batch) queue.push(e);
    wake?.();
  });
  const keepaliveMs = deps.config.streamKeepaliveS * 1000;
  const beatMs = Math.min(COMMENT_EVERY_MS, keepaliveMs / 2);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    let last = afterSeq;
    let ended = false;
    const stored = deps.events.statements.eventsAfter(responseId, afterSeq);
    if (stored.length) {
      let chunk = '';
      let inChunk = 0;
      for (const e of stored) {
        chunk += frameOf(responseId, e.seq, e.data);
        last = e.seq;
        if (isTerminalData(e.data)) {
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
    // Nothing more will come for a finished response whose tail was pruned or never written.
    const row = findResponseById(deps.db, responseId);
    if (!row || (isTerminal(row.status) && !deps.tasks.isRunning(responseId))) {
      if (!stored.length) yield rawChunk(': end\n\n');
      return;
    }
    if (!stored.length) yield rawChunk(': open\n\n');
    let quietSince = Date.now();
    while (true) {
      if (!queue.length) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, beatMs);
        });
        clearTimeout(timer);
        wake = undefined;
      }
      if (!queue.length) {
        if (Date.now() - quietSince >= keepaliveMs) {
          quietSince = Date.now();
          yield rawChunk(KEEPALIVE_FRAME);
        } else yield rawChunk(': ping\n\n');
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
      if (chunk) yield rawChunk(chunk);
      if (ended) return;
    }
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}
