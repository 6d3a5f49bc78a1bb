import { describe, expect, test } from 'bun:test';
import { createMemoryBus } from '../src/pubsub/bus';

describe('in-process bus', () => {
  test('delivers in publish order to every listener of the topic only', () => {
    const bus = createMemoryBus();
    const a: unknown[] = [];
    const b: unknown[] = [];
    const other: unknown[] = [];
    bus.subscribe('t', (e) => a.push(e));
    bus.subscribe('t', (e) => b.push(e));
    bus.subscribe('u', (e) => other.push(e));
    for (let i = 0; i < 5; i++) bus.publish('t', i);
    expect(a).toEqual([0, 1, 2, 3, 4]);
    expect(b).toEqual(a);
    expect(other).toEqual([]);
  });

  test('a failing listener never costs the others their event', () => {
    const errors: string[] = [];
    const bus = createMemoryBus((topic, err) => errors.push(`${topic}: ${(err as Error).message}`));
    const got: number[] = [];
    bus.subscribe('t', () => {
      throw new Error('boom');
    });
    bus.subscribe<number>('t', (e) => got.push(e));
    bus.publish('t', 1);
    bus.publish('t', 2);
    expect(got).toEqual([1, 2]);
    expect(errors).toEqual(['t: boom', 't: boom']);
  });

  test('unsubscribe (also from inside a delivery) stops delivery and forgets empty topics', () => {
    const bus = createMemoryBus();
    const got: number[] = [];
    let off = () => {};
    off = bus.subscribe<number>('t', (e) => {
      got.push(e);
      off();
    });
    const off2 = bus.subscribe<number>('t', (e) => got.push(e * 10));
    bus.publish('t', 1);
    bus.publish('t', 2);
    expect(got).toEqual([1, 10, 20]);
    off2();
    off2();
    expect(bus.listenerCount('t')).toBe(0);
  });
});
