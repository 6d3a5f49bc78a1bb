import type { Beating, HeartbeatTicker } from './heartbeat-ticker';
import { onAbort, shutdownFrame, type GuardOptions, type Revocable } from './stream-guard';
import { joinFrames } from './sse';

/**
 * An event stream written by the side that has the events, as they happen: the publisher calls
 * `write`, which hands the bytes to the socket at once. Iterator streams (src/http/stream-guard.ts)
 * take a few promise hops per chunk and per stream between the publisher and the socket; with a
 * hundred streams on a group that was a large part of sending a message (bench/RESULTS.md,
 * change 22). A push stream does what the guard does for the others: the per-user slot is
 * released when it ends, a final frame goes out at shutdown, it ends at once when the client
 * leaves. It also sends the heartbeats and cuts off a client that stops reading.
 */
export abstract class PushStream {
  /** Called once, by the operation layer, when the response exists: from now on write to `out`. */
  abstract start(out: StreamWriter): void;
  /** The stream has ended, however: write nothing more, let go of subscriptions. Called once. */
  abstract stop(why: StopReason): void;
}

export type StopReason =
  /** `failed`: `start` threw (the client gets the error instead of a stream); `revoked`: its credential was. */
  | { reason: 'ended' | 'client-gone' | 'shutdown' | 'failed' | 'revoked' }
  /** The client stopped reading, and `buffered` events (more than the limit) would have had to wait for it. */
  | { reason: 'slow-reader'; buffered: number };

export interface StreamWriter {
  /**
   * Send a chunk of frames carrying `events` events (0 for a comment). A client whose socket is
   * full gets it later; past `bufferEvents` events waiting it is cut off.
   */
  write(chunk: Uint8Array, events: number): void;
  /** No more frames: what is waiting still goes out, then the response ends. */
  end(): void;
}

/** What an iterator stream's guard is given (src/http/stream-guard.ts), and what only a push stream needs. */
export interface PushStreamOptions extends GuardOptions {
  /** Events that may wait for a client that does not read before it is cut off. */
  bufferEvents: number;
  heartbeats: HeartbeatTicker;
  headers: Record<string, string>;
}

const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(': heartbeat\n\n');

/** The bytes of a final frame: `rawChunk` text (what `shutdownFrame` gives), or a string as is. */
function frameBytes(frame: unknown): Uint8Array {
  const f = frame as { toSSE?: () => string } | string;
  return encoder.encode(typeof f === 'string' ? f : (f.toSSE?.() ?? ''));
}

class PushWriter implements StreamWriter, Beating, Revocable {
  private controller: ReadableStreamDirectController | undefined;
  /** Chunks the socket has not taken yet: before the response starts, or while it is full. */
  private queue: Uint8Array[] = [];
  /** Events in `queue`. */
  private waiting = 0;
  /** The socket refused the last write until it drains. */
  private blocked = false;
  /** `end()` was called: close once `queue` is out. */
  private ending = false;
  private closed = false;
  /** Nothing sent since the previous heartbeat tick. The opening counts as traffic. */
  private quiet = false;
  private release: (() => void) | undefined;
  private readonly cleanups: (() => void)[] = [];
  /** `source.stop` has run: it runs once, at shutdown or when the stream closes. */
  private sourceStopped = false;

  constructor(
    private readonly source: PushStream,
    private readonly opts: PushStreamOptions,
  ) {}

  /** Listen for shutdown and for the client leaving, and take heartbeats. After `source.start`. */
  listen() {
    const on = (signal: AbortSignal | undefined, act: () => void) => {
      if (signal && !this.closed) this.cleanups.push(onAbort(signal, act));
    };
    on(this.opts.shutdown, () => this.shutDown());
    on(this.opts.client, () => this.close({ reason: 'client-gone' }));
    if (this.closed) return;
    this.opts.watch?.add(this);
    this.opts.heartbeats.add(this);
  }

  /** Ended from outside: its credential was revoked. */
  revoke() {
    this.close({ reason: 'revoked' });
  }

  response(): Response {
    const body = new ReadableStream({
      type: 'direct',
      // Bun calls this once, when it starts sending the body; the stream lasts until it settles.
      pull: (controller: ReadableStreamDirectController) => {
        if (this.closed) return controller.close();
        this.controller = controller;
        this.drain();
        return new Promise<void>((resolve) => (this.release = resolve));
      },
      cancel: () => this.close({ reason: 'client-gone' }),
    } as unknown as ConstructorParameters<typeof ReadableStream<Uint8Array>>[0]);
    return new Response(body, { headers: this.opts.headers });
  }

  write(chunk: Uint8Array, events: number) {
    if (this.closed || this.ending) return;
    this.quiet = false;
    if (this.controller && !this.blocked && !this.queue.length) return this.send(chunk);
    // At most `bufferEvents` wait: a chunk that would bring more (a batch carries many) cuts it off.
    if (events && this.waiting + events > this.opts.bufferEvents) {
      const buffered = this.waiting + events;
      // Dropped at once: a client that does not read holds no memory here.
      this.queue = [];
      this.waiting = 0;
      return this.close({ reason: 'slow-reader', buffered });
    }
    this.queue.push(chunk);
    this.waiting += events;
  }

  end() {
    this.ending = true;
    this.drain();
  }

  /** A tick of the shared ticker: quiet for a whole interval and nothing waiting → heartbeat. */
  beat() {
    if (this.quiet && !this.queue.length && !this.blocked && this.controller && !this.ending) this.send(HEARTBEAT);
    this.quiet = true;
  }

  private send(chunk: Uint8Array) {
    const controller = this.controller!;
    let taken: number | Promise<number>;
    try {
      taken = controller.write(chunk);
      controller.flush();
    } catch {
      // Should the socket close under a write: the client is gone.
      return this.close({ reason: 'client-gone' });
    }
    // A promise: the socket is full. The chunk is kept; later ones wait in `queue` until it drains.
    if (taken instanceof Promise) {
      this.blocked = true;
      taken.then(
        () => {
          this.blocked = false;
          this.drain();
        },
        () => this.close({ reason: 'client-gone' }),
      );
    }
  }

  private drain() {
    if (this.closed || !this.controller || this.blocked) return;
    if (this.queue.length) {
      const chunks = this.queue;
      this.queue = [];
      this.waiting = 0;
      this.send(joinFrames(chunks));
    }
    if (this.ending && !this.blocked) this.close({ reason: 'ended' });
  }

  private shutDown() {
    if (this.closed) return;
    // Only the final frame: clients resume from their last id on the restarted server.
    this.queue = [frameBytes((this.opts.finalFrame ?? shutdownFrame)())];
    this.waiting = 0;
    this.ending = true;
    this.stopSource({ reason: 'shutdown' });
    this.drain();
  }

  /** `start` threw: stop the source and release the slot; there is no response to close. */
  abandon() {
    this.close({ reason: 'failed' });
  }

  private stopSource(why: StopReason) {
    if (this.sourceStopped) return;
    this.sourceStopped = true;
    this.source.stop(why);
  }

  private close(why: StopReason) {
    if (this.closed) return;
    this.closed = true;
    for (const off of this.cleanups) off();
    this.opts.watch?.remove(this);
    this.opts.heartbeats.remove(this);
    this.stopSource(why);
    this.opts.onEnd();
    try {
      this.controller?.close();
    } catch {
      // Already closed by the client's side.
    }
    this.release?.();
  }
}

/** The response of a push stream: the operation layer calls this with the stream a handler returned. */
export function pushStreamResponse(source: PushStream, opts: PushStreamOptions): Response {
  const writer = new PushWriter(source, opts);
  try {
    source.start(writer);
  } catch (err) {
    // The slot and whatever `start` joined before it threw go now: no response will end them.
    writer.abandon();
    throw err;
  }
  writer.listen();
  return writer.response();
}
