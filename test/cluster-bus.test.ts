/**
 * Realtime across instances (issue 20): the cluster bus over PostgreSQL LISTEN/NOTIFY and over
 * Redis pub/sub, each on a real server started for the run, with three buses standing for three
 * Parley instances. Skipped where PostgreSQL or Redis is not installed, except under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RedisClient, SQL } from 'bun';
import { createClusterBus, type ClusterBus } from '../src/pubsub/cluster-bus';
import { pgTransport } from '../src/pubsub/pg-transport';
import { redisTransport } from '../src/pubsub/redis-transport';
import type { BusTransport } from '../src/pubsub/transport';
import { postgresAvailable, startPostgres, type TestPostgres } from './support/postgres';
import { redisAvailable, startRedis, type TestRedis } from './support/redis';

/** Resolves once `check` holds, polling; fails after `ms`. */
async function until(check: () => boolean, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

interface Engine {
  name: string;
  available: () => boolean;
  start(): Promise<{ transport: () => BusTransport; cutListeners(): Promise<void>; stop(): Promise<void> }>;
}

const engines: Engine[] = [
  {
    name: 'PostgreSQL LISTEN/NOTIFY',
    available: postgresAvailable,
    async start() {
      const pg: TestPostgres = await startPostgres();
      const clients: SQL[] = [];
      const admin = new SQL(pg.url);
      return {
        transport: () => {
          const sql = new SQL({ url: pg.url, max: 2 });
          clients.push(sql);
          return pgTransport(sql);
        },
        async cutListeners() {
          await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`;
        },
        async stop() {
          for (const c of [...clients, admin]) await c.close().catch(() => undefined);
          await pg.stop();
        },
      };
    },
  },
  {
    name: 'Redis pub/sub',
    available: redisAvailable,
    async start() {
      const redis: TestRedis = await startRedis();
      const admin = new RedisClient(redis.url);
      return {
        transport: () => redisTransport(redis.url),
        async cutListeners() {
          await admin.send('CLIENT', ['KILL', 'TYPE', 'pubsub']);
        },
        async stop() {
          admin.close();
          await redis.stop();
        },
      };
    },
  },
];

for (const engine of engines) {
  describe.if(engine.available())(`the cluster bus over ${engine.name}`, () => {
    let world: Awaited<ReturnType<Engine['start']>>;
    let buses: ClusterBus[];
    const gaps: number[] = [0, 0, 0];
    beforeAll(async () => {
      world = await engine.start();
      buses = ['a', 'b', 'c'].map((id) => createClusterBus(world.transport(), { instanceId: `instance-${id}` }));
      await Promise.all(buses.map((b) => b.start()));
      buses.forEach((b, i) => b.onGap(() => gaps[i]!++));
    }, 60_000);
    afterAll(async () => {
      for (const b of buses ?? []) await b.close().catch(() => undefined);
      await world?.stop();
    }, 60_000);

    test('a burst published on one instance reaches the others once each, in order; its own listeners hear it at once', async () => {
      const [a, b, c] = buses;
      const heard: Record<string, number[]> = { a: [], b: [], c: [] };
      const offs = [a!.subscribe<{ n: number }>('response:r1', (e) => heard.a!.push(e.n)), b!.subscribe<{ n: number }>('response:r1', (e) => heard.b!.push(e.n)), c!.subscribe<{ n: number }>('response:r1', (e) => heard.c!.push(e.n))];
      const other: unknown[] = [];
      offs.push(c!.subscribe('response:other', (e) => other.push(e)));
      for (let n = 0; n < 2000; n++) a!.publish('response:r1', { n, data: `{"type":"text.delta","delta":"word ${n} "}` });
      expect(heard.a!.length).toBe(2000); // synchronous, as the in-process bus
      await until(() => heard.b!.length >= 2000 && heard.c!.length >= 2000, 'the burst on b and c');
      await Bun.sleep(200); // nothing more comes: no echo, no duplicate
      const all = Array.from({ length: 2000 }, (_, n) => n);
      expect(heard).toEqual({ a: all, b: all, c: all });
      expect(other).toEqual([]);
      offs.forEach((off) => off());
    }, 30_000);

    test('two instances publishing at once: each one\'s events arrive in its own order', async () => {
      const [a, b, c] = buses;
      const seen: string[] = [];
      const off = c!.subscribe<{ from: string; n: number }>('group:g1', (e) => seen.push(`${e.from}${e.n}`));
      for (let n = 0; n < 500; n++) {
        a!.publish('group:g1', { from: 'a', n });
        b!.publish('group:g1', { from: 'b', n });
      }
      await until(() => seen.length >= 1000, 'both senders on c');
      expect(seen.filter((s) => s.startsWith('a'))).toEqual(Array.from({ length: 500 }, (_, n) => `a${n}`));
      expect(seen.filter((s) => s.startsWith('b'))).toEqual(Array.from({ length: 500 }, (_, n) => `b${n}`));
      off();
    }, 30_000);

    test('an event larger than one payload (700 KB, with multibyte text and escapes) arrives whole', async () => {
      const [a, b] = buses;
      const text = 'Grüße 🙂 "quoted" \\ \n'.repeat(30_000);
      const got: { text: string }[] = [];
      const off = b!.subscribe<{ text: string }>('group:big', (e) => got.push(e));
      a!.publish('group:big', { text });
      a!.publish('group:big', { text: 'after' });
      await until(() => got.length >= 2, 'the big event and the one after it');
      expect(got[0]!.text.length).toBe(text.length);
      expect(got[0]!.text === text).toBe(true);
      expect(got[1]!.text).toBe('after');
      off();
    }, 30_000);

    test('the listening connections are cut: each instance is told of the gap, and events flow again', async () => {
      const [a, b, c] = buses;
      const before = [...gaps];
      await world.cutListeners();
      await until(() => gaps[1]! > before[1]! && gaps[2]! > before[2]!, 'the gap on b and c', 20_000);
      const got: number[] = [];
      const off = c!.subscribe<{ n: number }>('response:r2', (e) => got.push(e.n));
      // The publisher's own listening connection was cut too: it sends all the same.
      for (let n = 0; n < 10; n++) a!.publish('response:r2', { n });
      await until(() => got.length >= 10, 'events after the gap');
      expect(got).toEqual(Array.from({ length: 10 }, (_, n) => n));
      void b;
      off();
    }, 30_000);
  });
}

/**
 * An in-process transport shared by the buses made from it: `beforeSend` runs first (it may
 * throw, or wait), then the payload reaches every bus, as a server would deliver it.
 */
function memoryHub(beforeSend: (payload: string) => Promise<void>): () => BusTransport {
  const receivers: ((payload: string) => void)[] = [];
  return () => ({
    maxPayloadBytes: 7_800,
    async start(onPayload) {
      receivers.push(onPayload);
    },
    async send(payload) {
      await beforeSend(payload);
      for (const r of receivers) r(payload);
    },
    async close() {},
  });
}

describe('the cluster bus when sending fails', () => {
  test('the events that could not be sent are reported, and once sending works the others are told to read what they missed', async () => {
    const sent: string[] = [];
    let failing = true;
    const hub = memoryHub(async (payload) => {
      if (failing) throw new Error('connection refused');
      sent.push(payload);
    });
    const errors: unknown[] = [];
    const a = createClusterBus(hub(), { instanceId: 'a', onTransportError: (e) => errors.push(e) });
    const b = createClusterBus(hub(), { instanceId: 'b' });
    await Promise.all([a.start(), b.start()]);
    let gaps = 0;
    b.onGap(() => gaps++);
    const got: unknown[] = [];
    b.subscribe('t', (e) => got.push(e));
    a.publish('t', 1);
    await until(() => errors.length === 1, 'the failed send');
    expect(got).toEqual([]);
    failing = false;
    a.publish('t', 2);
    await until(() => got.length === 1, 'the next event');
    expect({ gaps, got }).toEqual({ gaps: 1, got: [2] });
    expect(JSON.parse(sent[0]!)).toEqual({ o: 'a', g: 1 }); // the resync notice goes first
  });

  test('a stalled transport holds at most 10,000 waiting messages: the oldest go, and the others are told of the gap', async () => {
    let release!: () => void;
    const stalled = new Promise<void>((r) => (release = r));
    const hub = memoryHub(() => stalled);
    const a = createClusterBus(hub(), { instanceId: 'a' });
    const b = createClusterBus(hub(), { instanceId: 'b' });
    await Promise.all([a.start(), b.start()]);
    let gaps = 0;
    b.onGap(() => gaps++);
    const got: number[] = [];
    b.subscribe<number>('t', (n) => got.push(n));
    a.publish('t', -1); // taken by the first send, which stalls
    for (let n = 0; n < 12_000; n++) a.publish('t', n);
    release();
    await until(() => got.includes(11_999), 'the newest message');
    expect(gaps).toBe(1);
    expect(got[0]).toBe(-1);
    expect(got.slice(1)).toEqual(Array.from({ length: 10_000 }, (_, i) => 2_000 + i));
  });
});
