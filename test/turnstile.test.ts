import { describe, expect, test } from 'bun:test';
import { createTurnstile, TurnAbandoned } from '../src/http/turnstile';

describe('turnstile', () => {
  test('at most `max` hold a turn; the others get theirs in arrival order as turns are released', async () => {
    const gate = createTurnstile(2);
    const order: string[] = [];
    const take = (name: string, signal?: AbortSignal) => gate.acquire(signal).then((release) => (order.push(name), release));
    const a = take('a');
    const b = take('b');
    const c = take('c');
    const d = take('d');
    const releaseA = await a;
    const releaseB = await b;
    await Bun.sleep(0);
    expect(order).toEqual(['a', 'b']);
    expect([gate.running, gate.waiting]).toEqual([2, 2]);
    releaseB();
    releaseB(); // idempotent: frees one turn, not two
    const releaseC = await c;
    expect(order).toEqual(['a', 'b', 'c']);
    expect([gate.running, gate.waiting]).toEqual([2, 1]);
    // A newcomer while one waits does not jump the queue.
    const late = take('late');
    releaseA();
    const releaseD = await d;
    await Bun.sleep(0);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    releaseC();
    (await late)();
    releaseD();
    expect(order).toEqual(['a', 'b', 'c', 'd', 'late']);
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });

  test('a released turn goes to the one waiting, not to a newcomer arriving in the same tick', async () => {
    const gate = createTurnstile(1);
    const order: string[] = [];
    const releaseA = await gate.acquire();
    const b = gate.acquire().then((release) => (order.push('b'), release));
    releaseA();
    const c = gate.acquire().then((release) => (order.push('c'), release));
    await Bun.sleep(0);
    expect(order).toEqual(['b']);
    expect(gate.running).toBe(1);
    (await b)();
    (await c)();
    expect(order).toEqual(['b', 'c']);
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });

  test('a waiter whose signal aborts leaves the queue and never gets a turn; an aborted signal is refused at once', async () => {
    const gate = createTurnstile(1);
    const release = await gate.acquire();
    const leaving = new AbortController();
    let leaverGotTurn = false;
    const abandoned = gate.acquire(leaving.signal).then(() => void (leaverGotTurn = true));
    const next = gate.acquire();
    expect(gate.waiting).toBe(2);
    leaving.abort();
    await expect(abandoned).rejects.toBeInstanceOf(TurnAbandoned);
    expect(gate.waiting).toBe(1);
    release();
    (await next)();
    expect(leaverGotTurn).toBe(false);
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
    await expect(gate.acquire(AbortSignal.abort())).rejects.toBeInstanceOf(TurnAbandoned);
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });
});
