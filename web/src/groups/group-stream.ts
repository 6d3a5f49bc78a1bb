import { failure, post, SIGNED_OUT } from '../shared/api';
import { readFrames } from '../shared/sse';
import { retryDelay, sleep } from '../shared/follow-response';

/** A message of a group chat (docs/groups.md, "Group message"). */
export interface GroupMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  sender: { id: string; name: string; image: string };
  /** An answer a shared assistant wrote (its name is the sender's). */
  assistantId?: string;
  createdAt: string;
}
export interface GroupChat {
  id: string;
  name: string;
  creatorId: string;
  conversationId: string;
  updatedAt: string;
  intelligentResponses: boolean;
  /** The catalogue id that answers `@ai` here; null: the server's group default. */
  model: string | null;
  /** The shared assistant that answers `@ai` here; null: Parley's own. */
  assistantId: string | null;
}
/** One event of the group's stream (docs/realtime.md, "Event kinds"); unknown kinds are ignored. */
export interface GroupEvent {
  type: string;
  [field: string]: unknown;
}

export interface StreamHooks {
  /** The stream is open. `resumed` is false when it started without a position (the first time,
   * or before any event arrived): what happened before it must be loaded with listMessages. */
  onOpen(resumed: boolean): void;
  onEvent(event: GroupEvent): void;
  /** Connected, or trying again after a break. */
  onConnection(state: 'live' | 'reconnecting'): void;
  /** The stream cannot go on: the group is gone or the user is no longer a member. */
  onEnd(reason: string): void;
}

/** `41` → [41, 0], `41.3` → [41, 3]: ids grow with every frame, progress frames included. */
const positionOf = (id: string): [number, number] => {
  const [seq, n] = id.split('.');
  return [Number(seq), Number(n ?? 0)];
};
const isAfter = (a: string, b: string | undefined) => {
  if (b === undefined) return true;
  const [as, an] = positionOf(a);
  const [bs, bn] = positionOf(b);
  return as > bs || (as === bs && an > bn);
};

/**
 * A stream is silent for at most two heartbeat intervals (10 s by default). After a laptop sleeps
 * the socket may be dead without an error; past this long without a byte it is dropped and resumed.
 */
const SILENCE_MS = 30_000;

/**
 * Follow a group's realtime events until `signal` aborts, across broken connections: the id of the
 * last frame applied is sent back as `Last-Event-ID`, so the server replays what was missed, and
 * any frame at or before it is dropped, so nothing is applied twice. Retries after 0.5, 1, 2 and
 * then every 4 seconds.
 */
export async function followGroup(groupChatId: string, hooks: StreamHooks, signal: AbortSignal): Promise<void> {
  let last: string | undefined;
  let failures = 0;
  while (!signal.aborted) {
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal.addEventListener('abort', stop, { once: true });
    let heard = Date.now();
    const watchdog = setInterval(() => Date.now() - heard > SILENCE_MS && connection.abort(), 5000);
    try {
      const res = await post('groupChat/subscribeToGroup', { groupChatId }, { signal: connection.signal, headers: last ? { 'last-event-id': last } : {} });
      if (!res.ok) {
        const err = await failure(res);
        if (res.status === 401) return void dispatchEvent(new Event(SIGNED_OUT));
        // 403: not a member (any more), or the group is gone. Retrying will not change that.
        if (res.status === 403) return hooks.onEnd('This group does not exist, or you are not one of its members.');
        if (res.status < 500 && res.status !== 429) return hooks.onEnd(err.message);
        throw err;
      }
      failures = 0;
      hooks.onConnection('live');
      hooks.onOpen(last !== undefined);
      const body = res.body!.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform: (chunk, out) => ((heard = Date.now()), out.enqueue(chunk)) }));
      for await (const { id, data } of readFrames(body)) {
        if (id !== undefined) {
          if (!isAfter(id, last)) continue;
          last = id;
        }
        hooks.onEvent(data);
        // The server ends the stream after these; the group or the membership is over.
        if (data.type === 'group.deleted') return hooks.onEnd('This group was deleted by its creator.');
      }
    } catch {
      // A lost connection, a cut frame, a 5xx or a 429: try again below.
    } finally {
      clearInterval(watchdog);
      signal.removeEventListener('abort', stop);
    }
    if (signal.aborted) return;
    hooks.onConnection('reconnecting');
    await sleep(retryDelay(failures++), signal);
  }
}
