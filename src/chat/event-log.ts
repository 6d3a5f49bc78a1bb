import type { Db } from '../db/connection';
import type { ToolCallOutput, UpstreamCursor } from '../ai/ai.types';
import { createEventStatements, type EventStatements } from './response.store';
import type { Bus } from '../pubsub/bus';
import { messageFrame } from '../http/sse';

/** One persisted event, ready to send: `frame` is its complete SSE frame, built once. */
export interface LiveEvent {
  seq: number;
  frame: string;
  terminal: boolean;
}

export const frameOf = (responseId: string, seq: number, data: string) => messageFrame(data, `${responseId}:${seq}`);
export const isTerminalData = (data: string) => data.startsWith('{"type":"done"') || data.startsWith('{"type":"error"');

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
    db: Db,
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

  /** Persist, then publish. Called by writers only. */
  commit(responseId: string, batch: { seq: number; data: string }[], cursor?: UpstreamCursor, toolOutputs?: ToolCallOutput[]): void {
    this.statements.append(responseId, batch, this.now(), cursor, toolOutputs);
    const topic = responseTopic(responseId);
    // Most turns run with nobody watching (a closed app, a background research): no frames then.
    if (!this.bus.listenerCount(topic)) return;
    const live: LiveEvent[] = batch.map((e) => ({ seq: e.seq, frame: frameOf(responseId, e.seq, e.data), terminal: isTerminalData(e.data) }));
    this.bus.publish(topic, live);
  }
}

/** Max events held before a synchronous flush; bounds memory and latency under a flood of deltas. */
const MAX_BATCH = 512;

/**
 * Numbers and buffers a response's events; the buffer is written in one transaction per
 * macrotask (setImmediate), so a burst of deltas costs one commit, not one per delta.
 */
export class EventWriter {
  private buffer: { seq: number; data: string }[] = [];
  private cursor: UpstreamCursor | undefined;
  private toolOutputs: ToolCallOutput[] = [];
  private scheduled: ReturnType<typeof setImmediate> | undefined;
  private failure: unknown;

  constructor(
    private readonly log: EventLog,
    readonly responseId: string,
    private seq: number,
  ) {}

  get lastSeq(): number {
    return this.seq;
  }

  emit(event: { type: string; [key: string]: unknown }): number {
    if (this.failure) throw this.failure;
    this.buffer.push({ seq: ++this.seq, data: JSON.stringify(event) });
    if (this.buffer.length >= MAX_BATCH) this.flush();
    else this.scheduleFlush();
    return this.seq;
  }

  /**
   * Remember where the upstream stands; written with the next batch, or on its own within a
   * turn of the event loop when no event comes (a tool round's new response, which may think
   * for a while before it says anything: a restart must know it exists).
   */
  setCursor(cursor: UpstreamCursor): void {
    this.cursor = cursor;
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
    this.scheduled ??= setImmediate(() => {
      // A failed background write must not crash the process: the task sees it on its next emit.
      try {
        this.flush();
      } catch (err) {
        this.failure = err;
      }
    });
  }

  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (!this.buffer.length && !this.cursor && !this.toolOutputs.length) return;
    const batch = this.buffer;
    const cursor = this.cursor;
    const toolOutputs = this.toolOutputs;
    this.buffer = [];
    this.cursor = undefined;
    this.toolOutputs = [];
    this.log.commit(this.responseId, batch, cursor, toolOutputs.length ? toolOutputs : undefined);
  }
}
