import type { Db } from '../db/connection';
import type { ResponseStatus } from '../db/schema';
import type { ToolCallOutput, UpstreamCursor } from '../ai/ai.types';
import { createEventStatements, type EventStatements } from './response.store';
import type { Bus } from '../pubsub/bus';
import { messageFrame } from '../http/sse';
import { queuedWrite } from '../db/commit-queue';

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

/**
 * The events of every response: persisted in small batches, then published on the app's bus
 * (like group events) to the streams following that response. An event is published only after
 * its batch has committed, so a client never sees an event a restart could lose.
 */
export class EventLog {
  readonly statements: EventStatements;

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
    private readonly bus: Bus,
  ) {
    this.statements = createEventStatements(db);
  }

  /** Follow a response's live events; returns the unsubscribe function. */
  subscribe(responseId: string, fn: (batch: LiveEvent[]) => void): () => void {
    return this.bus.subscribe(responseTopic(responseId), fn);
  }

  /** A writer for a response whose last persisted event is `lastSeq`. */
  writer(responseId: string, lastSeq: number): EventWriter {
    return new EventWriter(this, responseId, lastSeq);
  }

  /** Persist in its own transaction (or as part of the caller's: see `EventWriter.flushInTx`). Called by writers only. */
  write(responseId: string, pending: Pending): void {
    this.statements.append(responseId, pending.batch, this.now(), pending.cursor, pending.toolOutputs);
  }

  /**
   * Persist in the transaction shared with the other writes of this turn (src/db/commit-queue.ts:
   * concurrent responses pay one commit per turn, not one each), then publish right after it
   * commits. `take` runs when the batch does and returns what is buffered then.
   */
  commitQueued(responseId: string, take: () => Pending | undefined): Promise<unknown> {
    return queuedWrite(
      this.db,
      () => {
        const pending = take();
        if (pending) this.write(responseId, pending);
        return pending;
      },
      (pending) => {
        // Never throws (the bus isolates its listeners): a rejection must mean "not committed",
        // since the writer then writes the batch again.
        if (pending) this.publish(responseId, pending.batch);
      },
    );
  }

  /** Whether the connection is inside a transaction now (whose commit is still to come). */
  inTransaction(): boolean {
    return this.db.$client.inTransaction;
  }

  /** Hand committed events to the streams following the response. Called by writers only, after the commit. */
  publish(responseId: string, batch: { seq: number; data: string }[]): void {
    const topic = responseTopic(responseId);
    // Most turns run with nobody watching (a closed app, a background research): no frames then.
    if (!batch.length || !this.bus.listenerCount(topic)) return;
    const live: LiveEvent[] = batch.map((e) => ({ seq: e.seq, frame: frameOf(responseId, e.seq, e.data), terminal: isTerminalData(e.data) }));
    this.bus.publish(topic, live);
  }
}

/** What a writer holds until it is written. */
export interface Pending {
  batch: { seq: number; data: string }[];
  cursor?: UpstreamCursor;
  toolOutputs?: ToolCallOutput[];
}

/** Max events held before a synchronous flush; bounds memory and latency under a flood of deltas. */
const MAX_BATCH = 512;

/**
 * Numbers and buffers a response's events; the buffer is written once per turn of the event loop
 * through the commit queue, so a burst of deltas costs one commit, not one per delta, and the
 * responses streaming at the same time share it.
 */
export class EventWriter {
  private buffer: { seq: number; data: string }[] = [];
  private cursor: UpstreamCursor | undefined;
  private toolOutputs: ToolCallOutput[] = [];
  private queued = false;
  private failure: unknown;
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

  /**
   * Number and buffer an event. Inside a caller's transaction (a turn's first and last events) it
   * is only buffered: the caller writes it with `flushInTx`, and it is published after that commit.
   */
  emit(event: { type: string; [key: string]: unknown }): number {
    if (this.failure) throw this.failure;
    this.buffer.push({ seq: ++this.seq, data: JSON.stringify(event) });
    // Most events join a write already queued: nothing to decide, and no call into SQLite.
    if (this.queued && this.buffer.length < MAX_BATCH) return this.seq;
    if (this.log.inTransaction()) return this.seq;
    if (this.buffer.length >= MAX_BATCH) this.flush();
    else this.scheduleFlush();
    return this.seq;
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
    this.log
      .commitQueued(this.responseId, () => {
        this.queued = false;
        return (taken = this.take());
      })
      .catch(() => {
        // The shared transaction failed (a job of its own, or the whole batch: a full disk, an
        // I/O error). Put back what it took and write it alone, so that one batch's failure is
        // not every response's; if that fails too, the task hears it on its next emit (and must
        // not crash the process from here).
        this.queued = false;
        if (taken) this.putBack(taken);
        try {
          this.flush();
        } catch (err) {
          this.failure = err;
        }
      });
  }

  /** Write what is buffered now in a transaction of its own, then publish it. */
  flush(): void {
    const pending = this.take();
    if (!pending) return;
    this.log.write(this.responseId, pending);
    this.log.publish(this.responseId, pending.batch);
  }

  /**
   * Write what is buffered now as part of the caller's transaction (a turn's last events with its
   * final state), and return the function that publishes them: call it once that transaction has
   * committed, so no client sees an event the database could still lose.
   */
  flushInTx(): () => void {
    const pending = this.take();
    if (!pending) return () => {};
    this.log.write(this.responseId, pending);
    return () => this.log.publish(this.responseId, pending.batch);
  }

  private putBack(taken: Pending): void {
    this.buffer = [...taken.batch, ...this.buffer];
    // A cursor set since is newer; outputs keep their order.
    this.cursor ??= taken.cursor;
    this.toolOutputs = [...(taken.toolOutputs ?? []), ...this.toolOutputs];
  }

  /** Everything buffered, handed over once: whichever of `flush` and the queued write comes first writes it. */
  private take(): Pending | undefined {
    if (!this.buffer.length && !this.cursor && !this.toolOutputs.length) return undefined;
    const pending = { batch: this.buffer, cursor: this.cursor, toolOutputs: this.toolOutputs.length ? this.toolOutputs : undefined };
    this.buffer = [];
    this.cursor = undefined;
    this.toolOutputs = [];
    return pending;
  }
}
