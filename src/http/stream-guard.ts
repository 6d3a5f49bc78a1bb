import { rawChunk } from './sse';

/**
 * Wraps every iterator event stream an operation returns (src/http/register.ts does it, so
 * operations get this without asking; push streams, src/http/push-stream.ts, do the same
 * themselves):
 * - when the server shuts down, send one final frame and end the stream, so clients see a clean
 *   end and reconnect (with Last-Event-ID) to the restarted server;
 * - when the client goes away, end at once and release the stream slot.
 *
 * The source is raced rather than awaited: a generator parked on `await nextMessage()` cannot
 * run its `return()` until that await settles, and the server must not wait for the next group
 * message to close a stream.
 */

/** Sent at shutdown unless the operation names its own `finalFrame`. Clients ignore comments; `retry` spaces reconnects. */
export const shutdownFrame = () => rawChunk('retry: 2000\n: server shutting down\n\n');

/**
 * Run `act` when `signal` aborts (at once if it already has). Returns what removes the listener:
 * the shutdown signal lives as long as the server, and a listener left behind by every finished
 * stream would leak.
 */
export function onAbort(signal: AbortSignal, act: () => void): () => void {
  if (signal.aborted) {
    act();
    return () => {};
  }
  signal.addEventListener('abort', act, { once: true });
  return () => signal.removeEventListener('abort', act);
}

/** A stream that can be ended from outside, as if its client had left. */
export interface Revocable {
  revoke(): void;
}

/**
 * Whoever ends streams from outside (a revoked credential, src/auth/credential-watch.ts): told
 * when a stream starts and when it ends. Streams hand themselves over rather than a closure or
 * one more AbortSignal each: with ten thousand open streams, a signal cost a kilobyte or two.
 */
export interface StreamWatch {
  add(stream: Revocable): void;
  remove(stream: Revocable): void;
}

export interface GuardOptions {
  shutdown: AbortSignal;
  /** The request's signal: aborted when the client disconnects. */
  client?: AbortSignal;
  finalFrame?: () => unknown;
  /** Called once when the stream ends, however it ends. */
  onEnd: () => void;
  /** Ends the stream from outside, as if its client had left (a revoked credential). */
  watch?: StreamWatch;
}

const DONE = { done: true, value: undefined } as const;

/**
 * An async iterator rather than an async generator: a generator's `return()` waits behind the
 * pending `next()`, whereas this one ends the stream (and frees its slot) the moment Elysia
 * calls `return()` on a client disconnect. (A class, not a plain object: Elysia would serialise
 * a plain object as JSON.)
 */
export class GuardedStream implements AsyncIterableIterator<unknown>, Revocable {
  /**
   * Tells Elysia this is an event stream whatever the first frame is. Elysia otherwise decides
   * from the first value, and a stream opening with `sseComment('open')` would go out as
   * `application/json`.
   */
  readonly sse = true;
  private finished = false;
  /** Why the stream must stop, once known. */
  private stopReason: 'shutdown' | 'gone' | undefined;
  /** Wakes the pending `next()`. A fresh promise per `next()`, never one long-lived promise raced per frame: that would keep a reaction per frame alive for the whole stream. */
  private wake: ((reason: 'shutdown' | 'gone') => void) | undefined;
  private readonly cleanups: (() => void)[] = [];

  constructor(
    private readonly source: AsyncIterator<unknown>,
    private readonly opts: GuardOptions,
  ) {
    const on = (signal: AbortSignal | undefined, reason: 'shutdown' | 'gone') => {
      if (signal) this.cleanups.push(onAbort(signal, () => this.stop(reason)));
    };
    // Watched before the listeners: a client already gone finishes the stream right here, and
    // finishing takes it out of the watch again (added after, it would stay there for good).
    opts.watch?.add(this);
    on(opts.shutdown, 'shutdown');
    on(opts.client, 'gone');
  }

  /** Ended from outside (its credential was revoked): as if the client had left. */
  revoke() {
    this.stop('gone');
  }

  private stop(reason: 'shutdown' | 'gone') {
    this.stopReason ??= reason;
    this.wake?.(reason);
    // The client may leave before the first frame: free the slot right away, not at the next frame.
    if (reason === 'gone') this.finish();
  }

  private finish() {
    if (this.finished) return;
    this.finished = true;
    for (const off of this.cleanups) off();
    this.opts.watch?.remove(this);
    this.wake?.('gone');
    this.opts.onEnd();
    // Not awaited: see above. The source's own `finally` runs once its pending await settles.
    this.source.return?.(undefined)?.catch(() => undefined);
  }

  async next(): Promise<IteratorResult<unknown>> {
    if (this.finished) return DONE;
    if (this.stopReason === 'shutdown') {
      this.finish();
      return { done: false, value: (this.opts.finalFrame ?? shutdownFrame)() };
    }
    let res: IteratorResult<unknown> | 'shutdown' | 'gone';
    try {
      const stopped = new Promise<'shutdown' | 'gone'>((resolve) => {
        this.wake = resolve;
        if (this.stopReason) resolve(this.stopReason);
      });
      res = await Promise.race([this.source.next(), stopped]);
    } catch (err) {
      this.finish();
      throw err;
    } finally {
      this.wake = undefined;
    }
    if (res === 'shutdown') {
      this.finish();
      return { done: false, value: (this.opts.finalFrame ?? shutdownFrame)() };
    }
    if (res === 'gone' || res.done) {
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
