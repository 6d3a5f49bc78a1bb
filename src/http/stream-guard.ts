/**
 * Wraps every event stream an operation returns (src/http/register.ts does it, so operations
 * get this without asking):
 * - when the server shuts down, send one final frame and end the stream, so clients see a clean
 *   end and reconnect (with Last-Event-ID) to the restarted server;
 * - when the client goes away, end at once and release the stream slot.
 *
 * The source is raced rather than awaited: a generator parked on `await nextMessage()` cannot
 * run its `return()` until that await settles, and the server must not wait for the next group
 * message to close a stream.
 */

/** Sent at shutdown unless the operation names its own `finalFrame`. Clients ignore comments; `retry` spaces reconnects. */
export const shutdownFrame = () => ({ toSSE: () => 'retry: 2000\n: server shutting down\n\n' });

export interface GuardOptions {
  shutdown: AbortSignal;
  /** The request's signal: aborted when the client disconnects. */
  client?: AbortSignal;
  finalFrame?: () => unknown;
  /** Called once when the stream ends, however it ends. */
  onEnd: () => void;
}

const aborted = <T>(signal: AbortSignal | undefined, value: T): Promise<T> =>
  new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve(value);
    else signal.addEventListener('abort', () => resolve(value), { once: true });
  });

export async function* guardStream(source: AsyncIterator<unknown>, opts: GuardOptions): AsyncGenerator<unknown, void, unknown> {
  const stop = Promise.race([aborted(opts.shutdown, 'shutdown' as const), aborted(opts.client, 'gone' as const)]);
  // The client may be gone before the first frame: free the slot right away, not at the next frame.
  opts.client?.addEventListener('abort', opts.onEnd, { once: true });
  try {
    while (true) {
      const res = await Promise.race([source.next(), stop]);
      if (res === 'shutdown') {
        yield (opts.finalFrame ?? shutdownFrame)();
        return;
      }
      if (res === 'gone' || res.done) return;
      yield res.value;
    }
  } finally {
    opts.onEnd();
    // Not awaited: see above. The source's own `finally` runs once its pending await settles.
    source.return?.(undefined)?.catch(() => undefined);
  }
}
