import { describe, expect, test } from 'bun:test';
import { createMemoryBus } from '../src/pubsub/bus';
import { createGroupFanout, type FanoutBatch } from '../src/groups/group-fanout';
import { groupTopic, type GroupEvent } from '../src/groups/group-events';

const encoder = new TextEncoder();
const event = (seq: number): GroupEvent => ({ seq, type: 'message.created', data: { type: 'message.created' }, frame: encoder.encode(`id: ${seq}\n\n`) });
const turn = () => new Promise((resolve) => setImmediate(resolve));
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** A member that records the batches it receives. */
const recorder = () => {
  const batches: FanoutBatch[] = [];
  return { batches, receive: (b: FanoutBatch) => void batches.push(b) };
};

describe('group fan-out', () => {
  test('the events of one turn reach every member as one batch, after the turn, joined once', async () => {
    const bus = createMemoryBus();
    const fanout = createGroupFanout(bus, { batchMs: 0 });
    const a = recorder();
    const b = recorder();
    fanout.join('g1', a);
    fanout.join('g1', b);
    for (const seq of [1, 2, 3]) bus.publish(groupTopic('g1'), event(seq));
    // Nothing synchronously: the batch closes with the turn.
    expect(a.batches).toEqual([]);
    await turn();
    expect(a.batches.length).toBe(1);
    expect(b.batches[0]).toBe(a.batches[0]!);
    const batch = a.batches[0]!;
    expect(batch.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    // The whole batch is one chunk, the same bytes object for every stream that asks.
    expect(text(batch.frames())).toBe('id: 1\n\nid: 2\n\nid: 3\n\n');
    expect(batch.frames()).toBe(batch.frames());
    expect(text(batch.frames(1, 3))).toBe('id: 2\n\nid: 3\n\n');
    expect(batch.frames(2, 3)).toBe(batch.events[2]!.frame);
    // The next turn is the next batch.
    bus.publish(groupTopic('g1'), event(4));
    await turn();
    expect(a.batches.map((x) => x.events.map((e) => e.seq))).toEqual([[1, 2, 3], [4]]);
  });

  test('one bus listener per group, whatever the number of streams; it goes with the last one', async () => {
    const bus = createMemoryBus();
    const fanout = createGroupFanout(bus, { batchMs: 0 });
    const members = [recorder(), recorder(), recorder()];
    const joined = members.map((m) => fanout.join('g1', m));
    fanout.join('g2', recorder());
    expect(bus.listenerCount(groupTopic('g1'))).toBe(1);
    expect(fanout.members('g1')).toBe(3);
    joined[0]!.leave();
    joined[0]!.leave(); // twice is harmless
    expect(fanout.members('g1')).toBe(2);
    bus.publish(groupTopic('g1'), event(1));
    joined[1]!.leave();
    joined[2]!.leave();
    expect(fanout.members('g1')).toBe(0);
    expect(bus.listenerCount(groupTopic('g1'))).toBe(0);
    expect(bus.listenerCount(groupTopic('g2'))).toBe(1);
    // The batch pending when the last one left finds nobody.
    await turn();
    expect(members.map((m) => m.batches.length)).toEqual([0, 0, 0]);
    // A new stream subscribes afresh.
    const late = recorder();
    fanout.join('g1', late);
    bus.publish(groupTopic('g1'), event(2));
    await turn();
    expect(late.batches.map((x) => x.events.map((e) => e.seq))).toEqual([[2]]);
  });

  test('a member that joins during a turn is told how many of the next batch came before it', async () => {
    const bus = createMemoryBus();
    const fanout = createGroupFanout(bus, { batchMs: 0 });
    expect(fanout.join('g1', recorder()).skip).toBe(0);
    bus.publish(groupTopic('g1'), event(1));
    bus.publish(groupTopic('g1'), event(2));
    const late = recorder();
    expect(fanout.join('g1', late).skip).toBe(2);
    await turn();
    expect(late.batches[0]!.events.length).toBe(2);
    expect(fanout.join('g1', recorder()).skip).toBe(0);
  });

  test('a failing member never costs the others their batch; the failure is reported', async () => {
    const errors: string[] = [];
    const bus = createMemoryBus();
    const fanout = createGroupFanout(bus, { batchMs: 0, onMemberError: (groupId, err) => errors.push(`${groupId}: ${(err as Error).message}`) });
    const ok = recorder();
    fanout.join('g1', {
      receive() {
        throw new Error('boom');
      },
    });
    fanout.join('g1', ok);
    bus.publish(groupTopic('g1'), event(1));
    await turn();
    expect(ok.batches.length).toBe(1);
    expect(errors).toEqual(['g1: boom']);
  });

  test('a member may leave while it receives; the others still get the batch', async () => {
    const bus = createMemoryBus();
    const fanout = createGroupFanout(bus, { batchMs: 0 });
    const after = recorder();
    const leaving = fanout.join('g1', { receive: () => leaving.leave() });
    fanout.join('g1', after);
    bus.publish(groupTopic('g1'), event(1));
    await turn();
    expect(after.batches.length).toBe(1);
    expect(fanout.members('g1')).toBe(1);
  });

  test('a busy group gets a batch at most every batchMs; after a quiet spell an event goes at once', async () => {
    const bus = createMemoryBus();
    const fanout = createGroupFanout(bus, { batchMs: 60 });
    const got: { seqs: (number | null)[]; at: number }[] = [];
    fanout.join('g1', { receive: (b) => void got.push({ seqs: b.events.map((e) => e.seq), at: performance.now() }) });
    const t0 = performance.now();
    bus.publish(groupTopic('g1'), event(1));
    await turn();
    // The first event of a quiet group: at the end of its turn, no waiting.
    expect(got.map((g) => g.seqs)).toEqual([[1]]);
    // Busy now: the next events wait for the window, and go together.
    bus.publish(groupTopic('g1'), event(2));
    await Bun.sleep(10);
    bus.publish(groupTopic('g1'), event(3));
    await turn();
    expect(got.length).toBe(1);
    for (let i = 0; i < 100 && got.length < 2; i++) await Bun.sleep(5);
    expect(got.map((g) => g.seqs)).toEqual([[1], [2, 3]]);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(55);
    // Quiet for longer than the window: at once again.
    await Bun.sleep(80);
    const before = performance.now();
    bus.publish(groupTopic('g1'), event(4));
    await turn();
    expect(got.map((g) => g.seqs)).toEqual([[1], [2, 3], [4]]);
    expect(got[2]!.at - before).toBeLessThan(30);
    expect(got[0]!.at - t0).toBeLessThan(30);
  });
});
