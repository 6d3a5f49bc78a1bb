import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { rawRows } from '../src/db/work';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { t } from 'elysia';
import { startServer } from '../src/server';
import { testConfig } from '../src/config';
import { silentLogger } from '../src/log';
import { operations } from '../src/app';
import { defineOperation } from '../src/http/operation';
import { sseComment } from '../src/http/sse';
import { sseMessage } from './sse';
import { createLifecycle } from '../src/lifecycle';
import { guardStream } from '../src/http/stream-guard';
import { createTestContext, serverDatabase } from './helpers';
import { testOps, testStreamOp, SseReader } from './support/test-ops';
import { streamOpeners } from './support/stream-openers';
import { waitForListening } from '../scripts/lib/wait-for-listening';
import { spawnedParley } from './support/spawned-parley';

// Shared machines can be slow; a generous ceiling only turns a hang into a failure.
setDefaultTimeout(60_000);

describe('graceful shutdown (in process)', () => {
  test('lifecycle: aborts the signal first, runs hooks concurrently, a stuck hook is cut off at the deadline', async () => {
    const lc = createLifecycle();
    const order: string[] = [];
    lc.onShutdown('quick', () => void order.push(`quick saw aborted=${lc.signal.aborted}`));
    lc.onShutdown('stuck', () => new Promise(() => undefined));
    const off = lc.onShutdown('removed', () => void order.push('removed ran'));
    off();
    const started = performance.now();
    const results = await lc.shutdown(200);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(order).toEqual(['quick saw aborted=true']);
    expect(results.map((r) => [r.name, r.ok])).toEqual([['quick', true], ['stuck', false]]);
    expect(await lc.shutdown()).toBe(results); // idempotent
  });

  test('finished streams leave no listener on the long-lived shutdown signal, and frames pass through unchanged', async () => {
    const controller = new AbortController();
    let listeners = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => (listeners--, remove(...args))) as typeof remove;
    let released = 0;
    for (let i = 0; i < 50; i++) {
      const source = (async function* () {
        yield 1;
        yield 2;
      })();
      const seen: unknown[] = [];
      for await (const v of guardStream(source, { shutdown: signal, onEnd: () => released++ })) seen.push(v);
      expect(seen).toEqual([1, 2]);
    }
    expect(released).toBe(50);
    expect(listeners).toBe(0);
  });

  test('an open stream gets the final frame and ends; a new stream during shutdown is refused', async () => {
    const custom = defineOperation({
      path: 'test/customFinal',
      summary: 'test-only stream with its own final frame',
      input: t.Object({}),
      output: t.Object({ type: t.String() }),
      kind: 'sse',
      finalFrame: () => sseMessage({ data: { type: 'keepalive' } }),
      handler: async function* () {
        yield sseComment('open');
        await new Promise(() => undefined);
      },
    });
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], extraOperations: [...testOps, custom] });
    const ann = ctx.users[0]!;
    const plain = await ctx.call('test/stream', {}, ann);
    const own = await ctx.call('test/customFinal', {}, ann);
    const plainReader = new SseReader(plain.body!);
    const ownReader = new SseReader(own.body!);
    await plainReader.until((s) => s.includes('open'));
    await ownReader.until((s) => s.includes('open'));
    await ctx.deps.lifecycle.shutdown();
    const a = await plainReader.until(() => false, 2000);
    expect(a.text).toContain('retry: 2000\n: server shutting down\n\n');
    expect(a.ended).toBe(true);
    const b = await ownReader.until(() => false, 2000);
    expect(b.text).toContain('event: message\ndata: {"type":"keepalive"}');
    expect(b.ended).toBe(true);
    const late = await ctx.call('test/stream', {}, ann);
    expect(late.status).toBe(503);
    expect(late.headers.get('retry-after')).toBe('2');
  });

  test('startServer().stop(): streams get their final frame, hooks run before the database closes, all within 5 s', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-shutdown-'));
    const server = await startServer(testConfig({ ...(await serverDatabase()), dataDir, port: 0 }), silentLogger, { extraOperations: [testStreamOp] });
    const { seedUser } = await import('./helpers');
    const ann = await seedUser(server.deps.store, { email: 'ann@example.org' }, server.deps.config);
    let hookWrote = false;
    server.deps.lifecycle.onShutdown('checkpoint', async () => {
      await Bun.sleep(50);
      // What the task runner will do: write its checkpoint while the database is still open.
      await server.deps.store.write(() => rawRows(sql`UPDATE users SET name = ${'checkpointed'} WHERE id = ${ann.user.id}`));
      hookWrote = true;
    });
    const open = () =>
      fetch(`${server.url}/api/test/stream`, { method: 'POST', headers: { 'x-api-key': ann.key, 'content-type': 'application/json' }, body: '{"everyMs":0}' });
    const streams = (await Promise.all([open(), open(), open()])).map((r) => new SseReader(r.body!));
    for (const s of streams) expect((await s.until((x) => x.includes('open'))).text).toContain(': open');
    const started = performance.now();
    const reads = streams.map((s) => s.until(() => false, 4000));
    await server.stop();
    expect(performance.now() - started).toBeLessThan(5000);
    for (const r of await Promise.all(reads)) {
      expect(r.text).toContain(': server shutting down');
      expect(r.ended).toBe(true);
    }
    expect(hookWrote).toBe(true);
    const after = await fetch(`${server.url}/api/health`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(after).toBe('refused');
  });
});

describe('graceful shutdown (spawned server, SIGTERM)', () => {
  const sse = operations.filter((op) => op.kind === 'sse');
  const target = sse.find((op) => op.path in streamOpeners);
  // TODO(integrator): this runs as soon as an SSE operation with a row in
  // test/support/stream-openers.ts is on the branch (groupChat/subscribeToGroup has one).
  const run = target ? test : test.skip;
  run(`SIGTERM: ${target?.path ?? '(no SSE operation yet)'} gets a final frame, the process exits 0 within 5 s`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-sigterm-'));
    const { databaseUrl } = await serverDatabase();
    const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: dataDir, ...(databaseUrl ? { PARLEY_DATABASE_URL: databaseUrl } : {}) };
    const parley = spawnedParley(env);
    const key = parley.userWithKey('ann@example.org');
    const proc = parley.serve();
    try {
      const url = await waitForListening(proc);
      const api = async (path: string, body: unknown) =>
        (await fetch(`${url}/api/${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
      const input = await streamOpeners[target!.path]!(api);
      const stream = await fetch(`${url}/api/${target!.path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(input) });
      expect(stream.status).toBe(200);
      const reader = new SseReader(stream.body!);
      const first = await reader.until((x) => x.length > 0);
      expect(first.text.length).toBeGreaterThan(0);
      const rest = reader.until(() => false, 5000);
      const started = Date.now();
      proc.kill('SIGTERM');
      const code = await proc.exited;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(code).toBe(0);
      const tail = await rest;
      expect(tail.ended).toBe(true);
      expect(tail.text).toMatch(/server shutting down|event: message/);
    } finally {
      proc.kill('SIGKILL');
    }
  });
});
