import type { ResponseStatus } from '../db/schema';
import type { ToolCallOutput, UpstreamCursor } from '../ai/ai.types';
import { appendEvents, eventsAfter, findResponseById, isTerminal, type StoredEvent } from './response.store';
import type { Bus } from '../pubsub/bus';
import { messageFrame } from '../http/sse';
import { afterCommit, type Store, type Tx, type Work } from '../db/work';

/** One persisted event, ready to send: `frame` is its complete SSE frame, built once. */
export interface LiveEvent {
  seq: number;
  frame: string;
  terminal: boolean;
}

export const frameOf = (responseId: string, seq: number, data: string) => messageFrame(data, `${responseId}:${seq}`);
export const isTerminalData = (data: string) => data.startsWith('{"type":"done"') || data.startsWith('{"type":"error"');

/** The last event of a response that ended with `status` (and `error`, unless it completed). */
export const endingEvent = (status: ResponseStatus, error: string | null | undefined) =>
  status === 'completed' ? { type: 'done' } : { type: 'error', message: error ?? 'The response failed.' };

/** The bus topic of a response's live events: each message is one committed batch, `LiveEvent[]`. */
export const responseTopic = (responseId: string) => `response:${responseId}`;

/** Where a stream follower stands against a response's row: whether it ended, its last number, and the data of its last event as the row tells it. */
export interface RowState {
  ended: boolean;
  lastSeq: number;
  /** The last event's data, built from the row (for a response whose own last event is not stored). */
  ending: string;
}

/**
 * What differs between the kinds of responses whose events are logged (src/chat/follow.ts and
 * the writers read it): Parley's own AI turns (`chatEvents`, the interface's frames), and the
 * `/v1` door's background responses (src/openai-compat/, OpenAI's frames and tables of their own).
 */
export interface EventFormat {
  topic(responseId: string): string;
  /** The complete SSE frame of a stored event. */
  frame(responseId: string, seq: number, data: string): string;
  /** Whether an event's data ends its response. */
  terminal(data: string): boolean;
  /** Persist a batch with where the upstream stands and the tool outputs it goes with (the hot path of streaming). */
  append(tx: Tx, responseId: string, events: StoredEvent[], now: number, upstream?: UpstreamCursor, toolOutputs?: ToolCallOutput[]): Work<void>;
  eventsAfter(tx: Tx, responseId: string, seq: number): Work<StoredEvent[]>;
  /** The response's row as a follower needs it; undefined when it is gone. */
  state(tx: Tx, responseId: string): Work<RowState | undefined>;
  /** What a stream quiet for PARLEY_STREAM_KEEPALIVE_S sends (a frame of the format), or undefined for comment lines only. */
  keepalive?: string;
}

export const chatEvents: EventFormat = {
  topic: responseTopic,
  frame: frameOf,
  terminal: isTerminalData,
  append: appendEvents,
  eventsAfter,
  *state(tx, responseId) {
    const row = yield* findResponseById(tx, responseId);
    return row && { ended: isTerminal(row.status), lastSeq: row.lastSeq, ending: JSON.stringify(endingEvent(row.status, row.error)) };
  },
  keepalive: messageFrame('{"type":"keepalive"}'),
};

/**
 * Events a response may hold unwritten behind the write in flight before its task stops reading
 * the upstream (`EventWriter.room`). A slow database (PostgreSQL over a busy network, a disk
 * stalling) then slows the upstream's socket instead of growing the heap: about 1 MB of deltas.
 */
export const BACKLOG_LIMIT = 4096;

/**
 * The events of every response: persisted in small batches, then published on the app's bus
 * (like group events) to the streams following that response. An event is published only after
 * its batch has committed, so a client never sees an event a restart could lose.
 */
export class EventLog {
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly bus: Bus,
    readonly format: EventFormat = chatEvents,
  ) {}

  /** Follow a response's live events; returns the unsubscribe function. */
  subscribe(responseId: string, fn: (batch: LiveEvent[]) => void): () => void {
    return this.bus.subscribe(this.format.topic(responseId), fn);
  }

  /** A writer for a response whose last persisted event is `lastSeq`. */
  writer(responseId: string, lastSeq: number): EventWriter {
    return new EventWriter(this, responseId, lastSeq);
  }

  /** Persist what `take` hands over (when the work runs) in the caller's unit of work, and publish it once that commits. */
  *writeIn(tx: Tx, responseId: string, pending: Pending | undefined): Work<Pending | undefined> {
    if (!pending) return undefined;
    yield* this.format.append(tx, responseId, pending.batch, this.now(), pending.cursor, pending.toolOutputs);
    // Never throws (the bus isolates its listeners).
    yield* afterCommit(() => this.publish(responseId, pending.batch));
    return pending;
  }

  /**
   * Persist in the transaction shared with the other writes of this turn (src/db/commit-queue.ts:
   * on SQLite concurrent responses pay one commit per turn, not one each), or alone (`alone`: a
   * retry after a shared commit failed, a flush at shutdown), then publish right after it
   * commits. `take` runs when the write does and returns what is buffered then.
   */
  commit(responseId: string, take: () => Pending | undefined, alone = false): Promise<unknown> {
    const work = (tx: Tx) => this.writeIn(tx, responseId, take());
    return alone ? this.store.write(work) : this.store.queued(work);
  }

  /** Hand committed events to the streams following the response. Called after the commit only. */
  publish(responseId: string, batch: { seq: number; data: string }[]): void {
    const { format } = this;
    const topic = format.topic(responseId);
    // Most turns run with nobody watching (a closed app, a background research): no frames then.
    if (!batch.length || !this.bus.followed(topic)) return;
    const live: LiveEvent[] = batch.map((e) => ({ seq: e.seq, frame: format.frame(responseId, e.seq, e.data), terminal: format.terminal(e.data) }));
    this.bus.publish(topic, live);
  }
}

/** What a writer holds until it is written. */
export interface Pending {
  batch: { seq: number; data: string }[];
  cursor?: UpstreamCursor;
  toolOutputs?: ToolCallOutput[];
}

/**
 * Numbers and buffers a response's events; the buffer is written once per turn of the event loop
 * through the store's queued write, so a burst of deltas costs one commit, not one per delta, and
 * the responses streaming at the same time share it. One write of a response is in flight at a
 * time: what is emitted meanwhile waits for it, then goes in the next, so batches commit (and are
 * published) in the order of their numbers.
 */
export class EventWriter {
  private buffer: { seq: number; data: string }[] = [];
  private cursor: UpstreamCursor | undefined;
  private toolOutputs: ToolCallOutput[] = [];
  /** A write is scheduled or in flight: emits only buffer. */
  private queued = false;
  private failure: unknown;
  private inflight: Promise<void> | undefined;
  /** The upstream response of the last cursor set: a new one is written without waiting for events. */
  private upstreamId: string | undefined;

  constructor(
    private readonly log: EventLog,
    readonly responseId: string,
    private seq: number,
  ) {}

  get lastSeq(): number {
    return this.seq;
  }

  /** Number and buffer an event; it is written within a turn of the event loop. */
  emit(event: { type: string; [key: string]: unknown }): number {
    const seq = this.add(event);
    // Most events join a write already queued: nothing to decide.
    if (!this.queued) this.scheduleFlush();
    return seq;
  }

  /**
   * Number and buffer an event that the caller's own unit of work writes (`writeIn`: a turn's
   * first events with its rows, its last with its final state), so it commits with them.
   */
  add(event: { type: string; [key: string]: unknown }): number {
    if (this.failure) throw this.failure;
    this.buffer.push({ seq: ++this.seq, data: JSON.stringify(event) });
    return this.seq;
  }

  /**
   * Undefined while the backlog is under BACKLOG_LIMIT (the usual case costs no await); else a
   * promise that resolves once the write in flight and the next, which takes the backlog, are done.
   * A write that failed resolves it too: the next emit throws that failure.
   */
  room(): Promise<void> | undefined {
    if (this.buffer.length < BACKLOG_LIMIT || !this.queued || !this.inflight) return undefined;
    return this.inflight.then(() => this.room());
  }

  /**
   * Remember where the upstream stands; written with the next batch of events. A new upstream
   * response (a tool round's follow-up, which may think for a while before it says anything) is
   * written on its own within a turn of the event loop: a restart must know it exists. Positions
   * within a response that come without events (a tool's arguments streaming in) wait: a restart
   * that finds an older position only reads those again.
   */
  setCursor(cursor: UpstreamCursor): void {
    this.cursor = cursor;
    if (cursor.upstreamId === this.upstreamId) return;
    this.upstreamId = cursor.upstreamId;
    this.scheduleFlush();
  }

  /**
   * Remember a function tool's output, written with the events emitted before it (the tool's
   * own): stored only if they are, so a restart either finds both or runs the tool again.
   */
  recordToolOutput(toolOutput: ToolCallOutput): void {
    this.toolOutputs.push(toolOutput);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.queued) return;
    this.queued = true;
    let taken: Pending | undefined;
    this.inflight = this.log
      .commit(this.responseId, () => (taken = this.take()))
      .then(
        () => this.written(),
        () => {
          // The shared transaction failed (a job of its own, or the whole batch: a full disk, an
          // I/O error). Put back what it took and write it alone, so that one batch's failure is
          // not every response's; if that fails too, the task hears it on its next emit (and must
          // not crash the process from here).
          if (taken) this.putBack(taken);
          return this.log.commit(this.responseId, () => this.take(), true).then(
            () => this.written(),
            (err) => {
              this.failure = err;
              this.queued = false;
            },
          );
        },
      );
  }

  /**
   * Once no write of this response is in flight: a caller about to write the turn's last events
   * in its own unit of work waits for it, or on PostgreSQL (where writes run concurrently) its
   * commit could overtake an earlier batch's and publish the events out of order.
   */
  async idle(): Promise<void> {
    while (this.queued && this.inflight) await this.inflight;
  }

  /** A write committed: what was emitted while it ran goes in the next. */
  private written(): void {
    this.queued = false;
    if (this.buffer.length || this.cursor || this.toolOutputs.length) this.scheduleFlush();
  }

  /** Write what is buffered now in a transaction of its own, then publish it (a task stopping at shutdown). */
  async flush(): Promise<void> {
    // A batch in flight first: on PostgreSQL it may have taken the buffer and not yet committed,
    // and the caller (a task letting its turn go) needs all of it stored once this resolves.
    await this.idle();
    await this.log.commit(this.responseId, () => this.take(), true);
  }

  /**
   * Write what is buffered now as part of the caller's unit of work (a turn's first events with
   * its rows, its last with its final state); they are published once that commits, so no client
   * sees an event the database could still lose.
   */
  *writeIn(tx: Tx): Work<void> {
    yield* this.log.writeIn(tx, this.responseId, this.take());
  }

  private putBack(taken: Pending): void {
    this.buffer = [...taken.batch, ...this.buffer];
    // A cursor set since is newer; outputs keep their order.
    this.cursor ??= taken.cursor;
    this.toolOutputs = [...(taken.toolOutputs ?? []), ...this.toolOutputs];
  }

  /** Everything buffered, handed over once: whichever write comes first writes it. */
  private take(): Pending | undefined {
    if (!this.buffer.length && !this.cursor && !this.toolOutputs.length) return undefined;
    const pending = { batch: this.buffer, cursor: this.cursor, toolOutputs: this.toolOutputs.length ? this.toolOutputs : undefined };
    this.buffer = [];
    this.cursor = undefined;
    this.toolOutputs = [];
    return pending;
  }
}
