import { ApiError, failure, post, SIGNED_OUT } from './api';
import { readFrames, type Frame } from './sse';

/** Wait `ms`, or less when `signal` aborts (the view went away). */
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Back off while the network is gone: 0.5 s, 1 s, 2 s, then every 4 s. */
export const retryDelay = (failures: number) => Math.min(4000, 500 * 2 ** failures);

/** A dropped connection, a cut frame, or the server's 5xx or 429: worth another try. A bug is not. */
export const isRetryable = (err: unknown) => err instanceof TypeError || err instanceof DOMException || err instanceof SyntaxError || err instanceof ApiError;

/** An event the page failed to apply: a bug, which a reconnect would only hide. */
export class EventNotApplied extends Error {
  constructor(type: string, cause: unknown) {
    super(`The page could not show a "${type}" event.`, { cause });
  }
}

export interface ResponseFollower {
  /** Apply one event; false when it ends the stream (`done`, `error`). */
  onEvent(data: Frame['data']): boolean;
  /** The response's id once the stream has said it: what a resume asks for. */
  responseId(): string | undefined;
  /** The stream cannot go on: the server refused it, or it broke before the response had an id. */
  onFailure(message: string): void;
  /** What `onFailure` says when the connection broke before the response started. */
  lostBeforeStart: string;
}

/**
 * Read an AI response's event stream (`chat/stream`, `chat/streamDeepResearch`,
 * `chat/resumeStream`) to its end. A cut connection is resumed with `chat/resumeStream` after
 * the last event applied, and any frame at or below it (one the server sends again) is dropped,
 * so no delta is shown twice and none is missed.
 */
export async function followResponse(open: () => Promise<Response>, follower: ResponseFollower, signal: AbortSignal): Promise<void> {
  let seq = 0;
  let failures = 0;
  let request = open;
  while (!signal.aborted) {
    try {
      const res = await request();
      if (!res.ok) {
        const err = await failure(res);
        if (res.status === 401) dispatchEvent(new Event(SIGNED_OUT));
        // 4xx will not get better (404 on a resume: the answer is gone, its conversation deleted);
        // nor does anything before the response has an id to resume.
        if ((res.status < 500 && res.status !== 429) || !follower.responseId()) return follower.onFailure(err.message);
        throw err;
      }
      for await (const { id, data } of readFrames(res.body!)) {
        const n = id ? Number(id.slice(id.lastIndexOf(':') + 1)) : undefined;
        if (n !== undefined && n <= seq) continue;
        failures = 0;
        // Applied, then counted: an event the page could not apply is an error of the page's
        // (EventNotApplied, never retried), not a dropped connection to skip it after.
        let goesOn: boolean;
        try {
          goesOn = follower.onEvent(data);
        } catch (err) {
          throw new EventNotApplied(data.type, err);
        }
        if (n !== undefined) seq = n;
        if (!goesOn) return;
      }
      // The stream ended without `done` or `error`: the connection was cut (network, proxy, restart).
    } catch (err) {
      if (signal.aborted) return;
      if (!isRetryable(err)) throw err;
    }
    const responseId = follower.responseId();
    if (!responseId) return follower.onFailure(follower.lostBeforeStart);
    request = () => post('chat/resumeStream', { responseId, after: seq }, { signal });
    await sleep(retryDelay(failures++), signal);
  }
}
