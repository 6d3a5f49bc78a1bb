/**
 * A response's unwritten events are bounded: past BACKLOG_LIMIT behind a slow write, the writer
 * tells its task to wait (src/chat/respond.ts stops reading the upstream), and lets it go on once
 * the backlog is written.
 */
import { expect, test } from 'bun:test';
import { BACKLOG_LIMIT, EventLog, type Pending } from '../src/chat/event-log';
import type { Bus } from '../src/pubsub/bus';
import type { Store } from '../src/db/work';

/** A log whose writes finish only when the test says: a database stalling. */
class StalledLog extends EventLog {
  written: number[] = [];
  private release: (() => void)[] = [];
  constructor() {
    super({} as Store, () => 0, {} as Bus);
  }
  override commit(_responseId: string, take: () => Pending | undefined): Promise<unknown> {
    return new Promise<void>((resolve) => {
      this.release.push(() => {
        this.written.push(take()?.batch.length ?? 0);
        resolve();
      });
    });
  }
  finishOne(): void {
    this.release.shift()?.();
  }
  get waiting(): number {
    return this.release.length;
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

test('a backlog under the limit asks nothing of the task', () => {
  const writer = new StalledLog().writer('r', 0);
  for (let i = 0; i < BACKLOG_LIMIT - 1; i++) writer.emit({ type: 'text.delta', delta: 'x' });
  expect(writer.room()).toBeUndefined();
});

test('past the limit the task waits until the backlog is written, then goes on', async () => {
  const log = new StalledLog();
  const writer = log.writer('r', 0);
  for (let i = 0; i < BACKLOG_LIMIT; i++) writer.emit({ type: 'text.delta', delta: 'x' });
  const room = writer.room();
  expect(room).toBeInstanceOf(Promise);
  let resolved = false;
  room!.then(() => (resolved = true));

  // The first write takes the whole backlog when it runs (here: when it finishes).
  log.finishOne();
  await tick();
  expect(log.written).toEqual([BACKLOG_LIMIT]);
  expect(resolved).toBe(true);
  expect(writer.room()).toBeUndefined();
});

test('a backlog that builds behind a write in flight is waited for through the next write', async () => {
  const log = new StalledLog();
  const writer = log.writer('r', 0);
  writer.emit({ type: 'text.delta', delta: 'first' });
  // The first write is in flight with one event; the stall lets the rest pile up behind it.
  expect(log.waiting).toBe(1);
  log.finishOne(); // takes 'first'
  await tick();
  expect(log.written).toEqual([1]);

  for (let i = 0; i < BACKLOG_LIMIT + 10; i++) writer.emit({ type: 'text.delta', delta: 'x' });
  const room = writer.room();
  expect(room).toBeInstanceOf(Promise);
  let resolved = false;
  room!.then(() => (resolved = true));
  await tick();
  expect(resolved).toBe(false);
  log.finishOne();
  await tick();
  expect(log.written).toEqual([1, BACKLOG_LIMIT + 10]);
  expect(resolved).toBe(true);
});
