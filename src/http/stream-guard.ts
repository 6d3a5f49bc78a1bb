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

const DONE = { done: true, value: undefined } as const;

/**
 * An async iterator rather than an async generator: a generator's `return()` waits behind the
 * pending `next()`, whereas this one ends the stream (and frees its slot) the moment Elysia
 * calls `return()` on a client disconnect. (A class, not a plain object: Elysia would serialise
 * a plain object as JSON.)
 */
export class GuardedStream implements AsyncIterableIterator<unknown> {
  /**
   * Tells Elysia this is an event stream whatever the first frame is. Elysia otherwise decides
   * from the first value, and a stream opening with `sseComment('open')` would go out as
   * `application/json`.
   */
  readonly sse = true;
  private finished = false;
  private readonly stop: Promise<'shutdown' | 'gone' | 'ended'>;
  private endNow!: () => void;

  constructor(
    private readonly source: AsyncIterator<unknown>,
    private readonly opts: GuardOptions,
  ) {
    const ended = new Promise<'ended'>((resolve) => (this.endNow = () => resolve('ended')));
    this.stop = Promise.race([aborted(opts.shutdown, 'shutdown' as const), aborted(opts.client, 'gone' as const), ended]);
    // The client may leave before the first frame: free the slot right away, not at the next frame.
    opts.client?.addEventListener('abort', () => this.finish(), { once: true });
  }

  private finish() {
    if (this.finished) return;
    this.finished = true;
    this.endNow();
    this.opts.onEnd();
    // Not awaited: see above. The source's own `finally` runs once its pending await settles.
    this.source.return?.(undefined)?.catch(() => undefined);
  }

  async next(): Promise<IteratorResult<unknown>> {
    if (this.finished) return DONE;
    let res: IteratorResult<unknown> | 'shutdown' | 'gone' | 'ended';
    try {
      res = await Promise.race([this.source.next(), this.stop]);
    } catch (err) {
      this.finish();
      throw err;
    }
    if (res === 'shutdown') {
      this.finish();
      return { done: false, value: (this.opts.finalFrame ?? shutdownFrame)() };
    }
    if (res === 'gone' || res === 'ended' || res.done) {
      this.finish();
      return DONE;
    }
    return res;
  }

  async return(): Promise<IteratorResult<unknown>> {
    this.finish();
    return DONE;
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

export const guardStream = (source: AsyncIterator<unknown>, opts: GuardOptions) => new GuardedStream(source, opts);
