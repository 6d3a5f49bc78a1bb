import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, seedUser, ENVELOPE_KEYS, type TestUser, serverDatabase } from './helpers';
import { loadConfig, ConfigError, testConfig } from '../src/config';
import { createRateLimiter, parseRate } from '../src/http/rate-limit';
import { startServer } from '../src/server';
import { silentLogger } from '../src/log';
import { testOps, readSse } from './support/test-ops';
import { operations } from '../src/app';

// Shared machines can be slow; a generous ceiling only turns a hang into a failure.
setDefaultTimeout(60_000);

const TOO_MANY = { defined: false, code: 'TOO_MANY_REQUESTS', status: 429, message: 'Too Many Requests', data: {} };
const TOO_LARGE = { defined: false, code: 'PAYLOAD_TOO_LARGE', status: 413, message: 'Payload Too Large', data: {} };

describe('rate limits', () => {
  test('config rows parse N/unit and off; bad values are refused', () => {
    expect(parseRate('30/min', 'X')).toEqual({ capacity: 30, perMs: 60_000 });
    expect(parseRate('5/s', 'X')).toEqual({ capacity: 5, perMs: 1000 });
    expect(parseRate('off', 'X')).toBeUndefined();
    expect(loadConfig({ PARLEY_RATE_LIMIT_AI: '200/hour' }).rateLimitAi).toEqual({ capacity: 200, perMs: 3_600_000 });
    expect(() => loadConfig({ PARLEY_RATE_LIMIT_AI: 'lots' })).toThrow(ConfigError);
    expect(() => loadConfig({ PARLEY_RATE_LIMIT_WRITE: '0/min' })).toThrow('PARLEY_RATE_LIMIT_WRITE');
  });

  test('a marked operation answers 429 with Retry-After once the bucket is empty, per user, and refills', async () => {
    let now = Date.parse('2026-06-01T12:00:00.000Z');
    const ctx = await createTestContext({
      users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }],
      now: () => now,
      config: { rateLimitAi: { capacity: 2, perMs: 60_000 } },
      extraOperations: testOps,
    });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    expect((await ctx.json('test/expensive', {}, ann)).status).toBe(200);
    expect((await ctx.json('test/expensive', {}, ann)).status).toBe(200);
    const limited = await ctx.call('test/expensive', {}, ann);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('30'); // 2 per minute: one token every 30 s
    expect(limited.headers.get('x-content-type-options')).toBe('nosniff');
    const body = (await limited.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([...ENVELOPE_KEYS]);
    expect(body).toEqual(TOO_MANY);
    // Another user, and another operation of the same user, are not affected.
    expect((await ctx.json('test/expensive', {}, bob)).status).toBe(200);
    expect((await ctx.json('preferences/get', {}, ann)).status).toBe(200);
    // Anonymous callers get 401, not 429: limits apply after authentication.
    expect((await ctx.json('test/expensive', {})).status).toBe(401);
    now += 29_000;
    expect((await ctx.call('test/expensive', {}, ann)).headers.get('retry-after')).toBe('1');
    now += 1_000;
    expect((await ctx.json('test/expensive', {}, ann)).status).toBe(200);
    expect((await ctx.json('test/expensive', {}, ann)).status).toBe(429);
  });

  test('memory stays proportional to active users: refilled buckets are dropped', () => {
    let now = 0;
    const limiter = createRateLimiter({ ai: { capacity: 5, perMs: 1000 }, write: undefined }, () => now);
    for (let u = 0; u < 100; u++) limiter.take(`user${u}`, 'test/expensive', 'ai');
    limiter.take('anyone', 'test/other', 'write'); // unlimited buckets are never stored
    expect(limiter.size()).toBe(100);
    now += 61_000;
    limiter.take('late', 'test/expensive', 'ai');
    expect(limiter.size()).toBe(1);
  });

  test('off means unlimited', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { rateLimitAi: undefined }, extraOperations: testOps });
    for (let i = 0; i < 50; i++) expect((await ctx.json('test/expensive', {}, ctx.users[0])).status).toBe(200);
  });

  test('every rate-limited operation of the route table names a bucket with a config row', () => {
    const config = loadConfig({});
    const rates: Record<string, unknown> = { ai: config.rateLimitAi, write: config.rateLimitWrite };
    for (const op of operations.filter((o) => o.rateLimit)) expect(Object.keys(rates)).toContain(op.rateLimit!);
  });
});

describe('open streams per user', () => {
  test('one stream over the cap → 429; closing one frees its slot', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { maxStreamsPerUser: 2 }, extraOperations: testOps });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const first = await ctx.call('test/stream', {}, ann);
    const second = await ctx.call('test/stream', {}, ann);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('content-type')).toStartWith('text/event-stream');
    const third = await ctx.call('test/stream', {}, ann);
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBeTruthy();
    expect(await third.json()).toEqual(TOO_MANY);
    const other = await ctx.call('test/stream', {}, bob);
    expect(other.status).toBe(200);
    // The client goes away while the stream is parked waiting for an event: the slot is freed at once.
    await first.body!.cancel();
    await Bun.sleep(5);
    const again = await ctx.call('test/stream', {}, ann);
    expect(again.status).toBe(200);
    for (const r of [second, other, again]) await r.body!.cancel();
  });

  test('through a real socket: a client that disconnects frees its slot', async () => {
    const { createApp, operations: ops } = await import('../src/app');
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { maxStreamsPerUser: 1 } });
    const app = createApp(ctx.deps, [...ops, ...testOps]);
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => app.handle(r) });
    const url = `http://127.0.0.1:${server.port}/api/test/stream`;
    const open = (signal?: AbortSignal) =>
      fetch(url, { method: 'POST', headers: { 'x-api-key': ctx.users[0]!.key, 'content-type': 'application/json' }, body: '{}', signal });
    try {
      const abort = new AbortController();
      const first = await open(abort.signal);
      expect(first.status).toBe(200);
      expect((await readSse(first.body!, (t) => t.includes(': open'))).text).toContain(': open');
      expect((await open()).status).toBe(429);
      abort.abort();
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        await Bun.sleep(20);
        const res = await open();
        status = res.status;
        await res.body?.cancel();
      }
      expect(status).toBe(200);
    } finally {
      server.stop(true);
    }
  });
});

describe('request body size', () => {
  test('through the real server: over the limit → 413 envelope, with or without Content-Length; the server stays up', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-limits-'));
    const server = await startServer(testConfig({ ...(await serverDatabase()), dataDir, port: 0, maxBodyBytes: 2048 }), silentLogger);
    try {
      const url = `${server.url}/api/auth/createApiKey`;
      const user = await seedUser(server.deps.store, { email: 'ann@example.org' }, server.deps.config);
      const headers = { 'content-type': 'application/json', 'x-api-key': user.key };
      // Without a credential the answer is 401 whatever the body: the server does not read it.
      for (const [body, type] of [['x'.repeat(200_000), 'application/json'], ['{bad', 'application/json'], ['{}', 'text/plain']] as const) {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
        expect({ type, status: res.status }).toEqual({ type, status: 401 });
        await res.body?.cancel();
      }
      for (const size of [4096, 200_000]) {
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ name: 'x'.repeat(size) }) });
        expect(res.status).toBe(413);
        expect(await res.json()).toEqual(TOO_LARGE);
        expect(res.headers.get('x-frame-options')).toBe('DENY');
      }
      // Chunked: no Content-Length, so the limit must hold while reading.
      const chunk = new TextEncoder().encode('x'.repeat(1000));
      const body = new ReadableStream({
        start(c) {
          for (let i = 0; i < 20; i++) c.enqueue(chunk);
          c.close();
        },
      });
      const chunked = await fetch(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
      expect(chunked.status).toBe(413);
      expect(await chunked.json()).toEqual(TOO_LARGE);
      // Far past Bun's own backstop: refused before Parley reads it, and the server carries on.
      const huge = await fetch(url, { method: 'POST', headers, body: 'x'.repeat(3 * 1024 * 1024) });
      expect(huge.status).toBe(413);
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
