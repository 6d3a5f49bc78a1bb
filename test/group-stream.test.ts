import { describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, seedUser, SPEC_ERRORS, type TestUser, serverDatabase } from './helpers';
import { startServer } from '../src/server';
import { testConfig, type Config } from '../src/config';
import { createLogger, silentLogger } from '../src/log';
import { SseReader } from './support/test-ops';
import { parseRate } from '../src/http/rate-limit';
import { createLifecycle } from '../src/lifecycle';
import { readSse } from './group-sse';
import { groupWith, send, subscribe } from './group-helpers';
import { pruneGroupEvents } from '../src/groups/group-events.store';
import type { Store, Tx } from '../src/db/work';
import { findGroupById, lockGroupForUser } from '../src/groups/group.store';
import { sendGroupMessage } from '../src/groups/group.service';
import { publishProgress, publishRecorded } from '../src/groups/group-events';

/** A recorded message event, as publishRecorded takes it, without a store behind it. */
const message = (seq: number, content: string) => {
  const data = { type: 'message.created', message: { id: `x${seq}`, content } };
  return { seq, data, json: JSON.stringify(data) };
};

async function setup(config = {}, now?: () => number) {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }, { email: 'cy@example.org', name: 'Cy' }], config, now });
  const [ann, bob, cy] = ctx.users as [TestUser, TestUser, TestUser];
  return { ctx, ann, bob, cy };
}

describe('group realtime stream', () => {
  test('two subscribers receive the same ordered frames, each equal to what send returned', async () => {
    const { ctx, ann, bob } = await setup({ sseRetryMs: 2500 });
    const g = await groupWith(ctx, ann, [bob]);
    const a = await subscribe(ctx, ann, g.id);
    const b = await subscribe(ctx, bob, g.id);
    const sent = [];
    for (let i = 0; i < 10; i++) sent.push(await send(ctx, i % 2 ? ann : bob, g.id, `m${i}`));
    const fa = await a.take(10);
    const fb = await b.take(10);
    expect(fa).toEqual(fb);
    expect(fa.map((f) => f.data)).toEqual(sent.map((message) => ({ type: 'message.created', message })));
    for (const f of fa) {
      expect(f.event).toBe('message');
      expect(f.retry).toBe(2500);
    }
    const ids = fa.map((f) => Number(f.id));
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    await a.close();
    await b.close();
  });

  test('non-members and unknown groups are refused with 403 before any stream starts', async () => {
    const { ctx, ann, cy } = await setup();
    const g = await groupWith(ctx, ann);
    for (const id of [g.id, 'no-such-group']) {
      const res = await ctx.json('groupChat/subscribeToGroup', { groupChatId: id }, cy);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(SPEC_ERRORS[403]);
    }
    expect((await ctx.json('groupChat/subscribeToGroup', { groupChatId: g.id })).body).toEqual(SPEC_ERRORS[401]);
  });

  test('member events: joined and left; the leaver’s stream ends, the others go on', async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const a = await subscribe(ctx, ann, g.id);
    const b = await subscribe(ctx, bob, g.id);
    await ctx.json('groupChat/leaveGroup', { groupChatId: g.id }, bob);
    expect((await a.nextData()).data).toEqual({ type: 'member.left', member: { id: bob.user.id, name: 'Bob', image: '' } });
    expect((await b.nextData()).data.type).toBe('member.left');
    await expect(b.next()).rejects.toThrow('stream ended');
    const { code } = (await ctx.json('groupChat/createInvite', { groupChatId: g.id }, ann)).body;
    await ctx.json('groupChat/joinGroup', { code }, bob);
    expect((await a.nextData()).data).toEqual({ type: 'member.joined', member: { id: bob.user.id, name: 'Bob', image: '' } });
    await a.close();
  });

  test('events published in one turn go out as one batch; a member leaving inside it gets the events up to its own leaving', async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const a = await subscribe(ctx, ann, g.id);
    const b = await subscribe(ctx, bob, g.id);
    const left = { type: 'member.left', member: { id: bob.user.id, name: 'Bob', image: '' } };
    // Synchronously, as the commit queue publishes messages committed together.
    publishRecorded(ctx.deps, g.id, message(50, 'before'));
    publishRecorded(ctx.deps, g.id, { seq: 51, data: left, json: JSON.stringify(left) });
    publishRecorded(ctx.deps, g.id, message(52, 'after'));
    expect((await a.take(3)).map((f) => f.id)).toEqual(['50', '51', '52']);
    expect((await b.take(2)).map((f) => f.id)).toEqual(['50', '51']);
    await expect(b.next()).rejects.toThrow('stream ended');
    expect(ctx.deps.groupFanout.members(g.id)).toBe(1);
    await a.close();
  });

  test('a stream opened while a batch is pending does not get the events published before it', async () => {
    // A long batch window, so the batch is surely still pending while bob's stream opens.
    const { ctx, ann, bob } = await setup({ groupBatchMs: 400 });
    const g = await groupWith(ctx, ann, [bob]);
    const a = await subscribe(ctx, ann, g.id);
    publishRecorded(ctx.deps, g.id, message(50, 'opens the window'));
    expect((await a.nextData()).id).toBe('50');
    // Within the window: 'earlier' waits in the pending batch, bob joins it, 'later' follows.
    publishRecorded(ctx.deps, g.id, message(51, 'earlier'));
    const b = await subscribe(ctx, bob, g.id);
    publishRecorded(ctx.deps, g.id, message(52, 'later'));
    expect((await a.take(2)).map((f) => f.id)).toEqual(['51', '52']);
    expect((await b.nextData()).id).toBe('52');
    await a.close();
    await b.close();
  });

  test('PARLEY_GROUP_BATCH_MS spaces a busy group\'s batches', async () => {
    const { ctx, ann } = await setup({ groupBatchMs: 300 });
    const g = await groupWith(ctx, ann);
    const s = await subscribe(ctx, ann, g.id);
    await send(ctx, ann, g.id, 'one');
    await s.nextData();
    const first = performance.now();
    await send(ctx, ann, g.id, 'two');
    expect((await s.nextData()).data.message.content).toBe('two');
    // It waited for the window that the first batch opened.
    expect(performance.now() - first).toBeGreaterThanOrEqual(250);
    await s.close();
  });

  test('inside a batch, an event the stream already sent is dropped and the rest still goes out', async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const a = await subscribe(ctx, ann, g.id);
    await send(ctx, ann, g.id, 'm0');
    const sent = await a.nextData();
    const seq = Number(sent.id);
    // Resumed from the last event: its replay is empty and it has "sent" `seq`.
    const b = await subscribe(ctx, bob, g.id, String(seq));
    const again = { seq, data: sent.data, json: JSON.stringify(sent.data) };
    publishRecorded(ctx.deps, g.id, again);
    publishProgress(ctx.deps, g.id, { type: 'assistant.progress', text: '…' });
    publishRecorded(ctx.deps, g.id, message(seq + 1, 'm1'));
    for (const s of [a, b]) {
      const frames = await s.take(2);
      expect(frames.map((f) => f.data.type)).toEqual(['assistant.progress', 'message.created']);
      expect(frames[1]!.id).toBe(String(seq + 1));
      await expect(s.nextData(300)).rejects.toThrow('timed out');
    }
    await a.close();
    await b.close();
  });

  test('deleting the group sends group.deleted and closes every open stream', async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const a = await subscribe(ctx, ann, g.id);
    const b = await subscribe(ctx, bob, g.id);
    await ctx.json('groupChat/deleteGroupChat', { groupChatId: g.id }, ann);
    for (const s of [a, b]) {
      expect((await s.nextData()).data).toEqual({ type: 'group.deleted', groupChatId: g.id });
      await expect(s.next()).rejects.toThrow('stream ended');
    }
    expect(ctx.deps.groupFanout.members(g.id)).toBe(0);
  });

  test("the group's conversation goes with the group: chat/deleteConversation sends group.deleted; truncate refuses", async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const sent = await send(ctx, bob, g.id, 'hello');
    const truncated = await ctx.json('chat/truncateConversationFromItem', { conversationId: g.conversationId, fromItemId: sent.id }, ann);
    expect(truncated.body).toEqual({ success: false, deletedCount: 0, reason: 'GROUP_CONVERSATION' });
    const b = await subscribe(ctx, bob, g.id);
    expect((await ctx.json('chat/deleteConversation', { conversationId: g.conversationId }, bob)).status).toBe(403);
    expect((await ctx.json('chat/deleteConversation', { conversationId: g.conversationId }, ann)).body).toEqual({ success: true });
    expect((await b.nextData()).data).toEqual({ type: 'group.deleted', groupChatId: g.id });
    await expect(b.next()).rejects.toThrow('stream ended');
    expect((await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message: 'still there?' }, ann)).status).toBe(404);
  });

  test('Last-Event-ID under concurrent sends: every event after the id, then the live tail, no gap, no duplicate', async () => {
    const { ctx, ann, bob } = await setup();
    const g = await groupWith(ctx, ann, [bob]);
    const first = await subscribe(ctx, bob, g.id);
    const total = 40;
    const sending = (async () => {
      for (let i = 0; i < total; i++) {
        await send(ctx, i % 2 ? ann : bob, g.id, `m${i}`);
        if (i % 7 === 0) await Bun.sleep(1);
      }
    })();
    const before = await first.take(10);
    await first.close();
    const lastId = before.at(-1)!.id!;
    // Reconnect while the sender keeps going.
    const again = await subscribe(ctx, bob, g.id, lastId);
    const after = await again.take(total - 10, 10_000);
    await sending;
    const contents = [...before, ...after].map((f) => f.data.message.content);
    expect(contents).toEqual(Array.from({ length: total }, (_, i) => `m${i}`));
    const ids = [...before, ...after].map((f) => Number(f.id));
    expect(new Set(ids).size).toBe(total);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    await again.close();
  }, 20_000);

  test('events published while the replay read is under way go out once, in order (a store that answers later, as PostgreSQL does)', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let groupId = '';
    // Once a stream has joined the group's fan-out, reads answer late: the stream's own read, made
    // after it joined, answers only once `held` resolves.
    const late = (store: Store): Store => ({
      ...store,
      read: async (work) => {
        const wait = groupId !== '' && ctx.deps.groupFanout.members(groupId) > 0;
        const result = await store.read(work);
        if (wait) await held;
        return result;
      },
    });
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }], deps: (store) => ({ store: late(store) }) });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const g = await groupWith(ctx, ann, [bob]);
    await send(ctx, ann, g.id, 'm0');
    await send(ctx, ann, g.id, 'm1');
    const from = (await ctx.store.read((tx) => findGroupById(tx, g.id)))!.lastSeq - 1; // the id of m0
    groupId = g.id;
    const opening = subscribe(ctx, bob, g.id, String(from));
    while (!ctx.deps.groupFanout.members(g.id)) await Bun.sleep(1);
    // Sent (without a read: the membership check is the write's own) after the stream's read, before its answer.
    const member = function* (tx: Tx) {
      return (yield* lockGroupForUser(tx, g.id, ann.user.id))!.group;
    };
    for (const text of ['m2', 'm3']) await sendGroupMessage(ctx.deps, member, ann.user, text);
    await Bun.sleep(20); // their batch reached the stream, which keeps it until it starts (they are not in its replay)
    release();
    const s = await opening;
    await sendGroupMessage(ctx.deps, member, ann.user, 'm4');
    const frames = await s.take(4);
    expect(frames.map((f) => f.data.message.content)).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(frames.map((f) => Number(f.id))).toEqual([from + 1, from + 2, from + 3, from + 4]);
    await expect(s.nextData(300)).rejects.toThrow('timed out');
    await s.close();
  });

  test('a resume whose events were pruned says stream.reset, then continues live', async () => {
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    const { ctx, ann } = await setup({ groupEventRetentionDays: 1 }, () => clock);
    const g = await groupWith(ctx, ann);
    for (let i = 0; i < 3; i++) await send(ctx, ann, g.id, `old${i}`);
    clock += 2 * 86_400_000;
    await send(ctx, ann, g.id, 'new');
    await ctx.store.read((tx) => pruneGroupEvents(tx, 1, clock));
    const s = await subscribe(ctx, ann, g.id, '1');
    const expired = await s.nextData();
    expect([expired.id, expired.data]).toEqual(['1', { type: 'stream.reset', reason: 'events_expired' }]);
    const kept = await s.nextData();
    expect([kept.id, kept.data.message.content]).toEqual(['4', 'new']);
    await s.close();
    const bogus = await subscribe(ctx, ann, g.id, '99');
    const reset = await bogus.nextData();
    expect([reset.id, reset.data]).toEqual(['4', { type: 'stream.reset', reason: 'unknown_event_id' }]);
    // Everything after the reset is new to this client, although its ids are below 99.
    await send(ctx, ann, g.id, 'after reset');
    const live = await bogus.nextData();
    expect([live.id, live.data.message.content]).toEqual(['5', 'after reset']);
    await bogus.close();
  });

  test('a subscriber that stops reading is cut off; the others keep receiving everything', async () => {
    const { ctx, ann, bob } = await setup({ sseBufferEvents: 5 });
    const g = await groupWith(ctx, ann, [bob]);
    const fast = await subscribe(ctx, ann, g.id);
    const slow = await subscribe(ctx, bob, g.id);
    expect(ctx.deps.groupFanout.members(g.id)).toBe(2);
    // What the reader's side takes before it pushes back (64 KB in process, the socket's buffers
    // over a network) fills first; then events wait in the stream, and the sixth cuts it off.
    const filler = 'x'.repeat(4000);
    const got: string[] = [];
    for (let i = 0; i < 40; i++) {
      await send(ctx, ann, g.id, `m${i} ${filler}`);
      got.push((await fast.nextData()).data.message.content.split(' ')[0]);
    }
    expect(got).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`));
    expect(ctx.deps.groupFanout.members(g.id)).toBe(1);
    expect(ctx.deps.heartbeats.size).toBe(1);
    // The slow reader gets what was already on its way, then the end: never all 40.
    await expect(slow.take(40)).rejects.toThrow('stream ended');
    await fast.close();
  }, 20_000);

  test('a stream that fails while it starts answers 500 and keeps neither its slot nor its place in the fan-out', async () => {
    const lines: { msg: string; status?: number; path?: string }[] = [];
    const log = createLogger('info', (line) => void lines.push(JSON.parse(line)));
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }], config: { maxStreamsPerUser: 1 }, log });
    const ann = ctx.users[0]!;
    const g = await groupWith(ctx, ann);
    // The replay's read fails (its table is gone for a moment).
    await ctx.query(sql`ALTER TABLE group_events RENAME TO group_events_away`);
    const failed = await ctx.call('groupChat/subscribeToGroup', { groupChatId: g.id }, { 'x-api-key': ann.key, 'last-event-id': '0' });
    await ctx.query(sql`ALTER TABLE group_events_away RENAME TO group_events`);
    expect(failed.status).toBe(500);
    // One request line, the 500 the client got.
    expect(lines.filter((l) => l.msg === 'request' && l.path === '/api/groupChat/subscribeToGroup').map((l) => l.status)).toEqual([500]);
    expect(ctx.deps.groupFanout.members(g.id)).toBe(0);
    expect(ctx.deps.heartbeats.size).toBe(0);
    const s = await subscribe(ctx, ann, g.id);
    await send(ctx, ann, g.id, 'works');
    expect((await s.nextData()).data.message.content).toBe('works');
    await s.close();
  });

  test('finished group streams leave no listener on the long-lived shutdown signal', async () => {
    const lifecycle = createLifecycle();
    const signal = lifecycle.signal;
    let listeners = 0;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => (listeners--, remove(...args))) as typeof remove;
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], deps: { lifecycle } });
    const ann = ctx.users[0]!;
    const g = await groupWith(ctx, ann);
    const before = listeners;
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(await subscribe(ctx, ann, g.id));
    expect(listeners).toBe(before + 5);
    for (const s of streams) await s.close();
    await Bun.sleep(5);
    expect(listeners).toBe(before);
    expect(ctx.deps.groupFanout.members(g.id)).toBe(0);
  });

  test('heartbeat comments on a quiet stream', async () => {
    const { ctx, ann } = await setup({ sseHeartbeatSeconds: 1 });
    const g = await groupWith(ctx, ann);
    const s = await subscribe(ctx, ann, g.id);
    // The shared ticker's phase is not the stream's: the first beat comes one to two intervals after open.
    expect(await s.next(3500)).toEqual({ comment: 'heartbeat' });
    await s.close();
  });

  test('per-user limit on open streams: one more is 429, closing one frees a slot', async () => {
    const { ctx, ann } = await setup({ maxStreamsPerUser: 2 });
    const g = await groupWith(ctx, ann);
    const s1 = await subscribe(ctx, ann, g.id);
    const s2 = await subscribe(ctx, ann, g.id);
    const refused = await ctx.call('groupChat/subscribeToGroup', { groupChatId: g.id }, ann);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    await s1.close();
    // The slot is released when the server sees the stream end: at once in memory, a moment later
    // on PostgreSQL (a lease row). Wait for it, within a bound, rather than for a fixed time.
    const deadline = Date.now() + 3000;
    let opened = await ctx.call('groupChat/subscribeToGroup', { groupChatId: g.id }, ann);
    while (opened.status === 429 && Date.now() < deadline) {
      await Bun.sleep(20);
      opened = await ctx.call('groupChat/subscribeToGroup', { groupChatId: g.id }, ann);
    }
    expect(opened.status).toBe(200);
    const s3 = readSse(opened);
    await s2.close();
    await s3.close();
  });

  test('group.updated reaches subscribers when intelligent responses change', async () => {
    const { ctx, ann } = await setup();
    const g = await groupWith(ctx, ann);
    const s = await subscribe(ctx, ann, g.id);
    await ctx.json('groupChat/setIntelligentResponses', { groupChatId: g.id, enabled: false }, ann);
    const f = await s.nextData();
    expect(f.data.type).toBe('group.updated');
    expect(f.data.groupChat).toMatchObject({ id: g.id, intelligentResponses: false });
    await s.close();
  });
});

describe('group realtime stream over a socket', () => {
  /** A server on 127.0.0.1 with Ann and Bob in one group, and a way to send as Ann. */
  async function serve(config: Partial<Config> = {}) {
    const server = await startServer(testConfig({ ...(await serverDatabase()), dataDir: mkdtempSync(join(tmpdir(), 'parley-group-socket-')), port: 0, ...config }), silentLogger);
    const [ann, bob] = (await Promise.all(['ann@example.org', 'bob@example.org'].map((email) => seedUser(server.deps.store, { email }, server.deps.config)))) as [TestUser, TestUser];
    const api = async (path: string, body: unknown, as: TestUser) =>
      fetch(`${server.url}/api/${path}`, { method: 'POST', headers: { 'x-api-key': as.key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const group = (await (await api('groupChat/createGroupChat', { name: 'Trip' }, ann)).json()) as { id: string };
    const { code } = (await (await api('groupChat/createInvite', { groupChatId: group.id }, ann)).json()) as { code: string };
    expect((await api('groupChat/joinGroup', { code }, bob)).status).toBe(200);
    const sendAs = async (as: TestUser, message: string) => expect((await api('groupChat/sendGroupMessage', { groupChatId: group.id, message }, as)).status).toBe(200);
    return { server, ann, bob, group, api, sendAs };
  }

  test('a client that disconnects gives back its slot and leaves the fan-out at once', async () => {
    const { server, ann, group, api, sendAs } = await serve({ maxStreamsPerUser: 1 });
    try {
      const aborter = new AbortController();
      const res = await fetch(`${server.url}/api/groupChat/subscribeToGroup`, {
        method: 'POST',
        headers: { 'x-api-key': ann.key, 'content-type': 'application/json' },
        body: JSON.stringify({ groupChatId: group.id }),
        signal: aborter.signal,
      });
      const first = new SseReader(res.body!);
      expect((await first.until((s) => s.includes('open'))).text).toBe(': open\n\n');
      expect(server.deps.groupFanout.members(group.id)).toBe(1);
      expect((await api('groupChat/subscribeToGroup', { groupChatId: group.id }, ann)).status).toBe(429);
      aborter.abort();
      for (let i = 0; i < 100 && server.deps.groupFanout.members(group.id); i++) await Bun.sleep(10);
      expect(server.deps.groupFanout.members(group.id)).toBe(0);
      expect(server.deps.heartbeats.size).toBe(0);
      const again = await api('groupChat/subscribeToGroup', { groupChatId: group.id }, ann);
      expect(again.status).toBe(200);
      const second = new SseReader(again.body!);
      await second.until((s) => s.includes('open'));
      await sendAs(ann, 'still here');
      expect((await second.until((s) => s.includes('still here'))).text).toContain('"content":"still here"');
      await second.cancel();
    } finally {
      await server.stop();
    }
  });

  test('a client that stops reading is cut off once its socket is full and the buffer limit is passed; the others get everything', async () => {
    const { server, ann, bob, group, api, sendAs } = await serve({ sseBufferEvents: 5, rateLimitWrite: parseRate('100000/min', 'test') });
    const warnings: string[] = [];
    const warn = server.deps.log.warn;
    server.deps.log.warn = (msg: string, fields?: Record<string, unknown>) => void warnings.push(msg, JSON.stringify(fields));
    // Bob's client sends its request, then never reads: the kernel's buffers fill, then Parley's.
    const { port } = new URL(server.url);
    const body = JSON.stringify({ groupChatId: group.id });
    const stalled = connect(Number(port), '127.0.0.1', () => {
      stalled.write(`POST /api/groupChat/subscribeToGroup HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${bob.key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      stalled.pause();
    });
    const fast = new SseReader((await api('groupChat/subscribeToGroup', { groupChatId: group.id }, ann)).body!);
    try {
      await fast.until((s) => s.includes('open'));
      for (let i = 0; i < 100 && server.deps.groupFanout.members(group.id) < 2; i++) await Bun.sleep(10);
      expect(server.deps.groupFanout.members(group.id)).toBe(2);
      const big = 'x'.repeat(19_000);
      let sent = 0;
      // Loopback buffers take a few MB; 20 KB messages fill them in a few hundred.
      while (server.deps.groupFanout.members(group.id) === 2 && sent < 2000) await sendAs(ann, `m${sent++} ${big}`);
      expect(server.deps.groupFanout.members(group.id)).toBe(1);
      expect(warnings[0]).toBe('slow group subscriber disconnected');
      const cut = JSON.parse(warnings[1]!);
      expect(cut).toMatchObject({ groupId: group.id, userId: bob.user.id });
      // More than the limit would have had to wait (a batch may carry several).
      expect(cut.buffered).toBeGreaterThan(5);
      await sendAs(ann, 'after the cut');
      const all = await fast.until((s) => s.includes('after the cut'), 20_000);
      const ids = [...all.text.matchAll(/"content":"(m\d+) /g)].map((m) => m[1]);
      expect(ids).toEqual(Array.from({ length: sent }, (_, i) => `m${i}`));
    } finally {
      server.deps.log.warn = warn;
      stalled.destroy();
      await fast.cancel();
      await server.stop();
    }
  }, 60_000);

  test('at shutdown a group stream gets the final frame and ends', async () => {
    const { server, ann, group, api } = await serve();
    const s = new SseReader((await api('groupChat/subscribeToGroup', { groupChatId: group.id }, ann)).body!);
    await s.until((x) => x.includes('open'));
    const rest = s.until(() => false, 5000);
    await server.stop();
    const tail = await rest;
    expect(tail.text).toBe('retry: 2000\n: server shutting down\n\n');
    expect(tail.ended).toBe(true);
    expect(server.deps.groupFanout.members(group.id)).toBe(0);
  });
});
