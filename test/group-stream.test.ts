import { describe, expect, test } from 'bun:test';
import { createTestContext, SPEC_ERRORS, type TestUser } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import { pruneGroupEvents } from '../src/groups/group-events.store';
import { publishProgress, publishRecorded } from '../src/groups/group-events';

/** A recorded message event, as publishRecorded takes it, without a store behind it. */
const message = (seq: number, content: string) => {
  const data = { type: 'message.created', message: { id: `x${seq}`, content } };
  return { seq, data, json: JSON.stringify(data) };
};

function setup(config = {}, now?: () => number) {
  const ctx = createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }, { email: 'cy@example.org', name: 'Cy' }], config, now });
  const [ann, bob, cy] = ctx.users as [TestUser, TestUser, TestUser];
  return { ctx, ann, bob, cy };
}

describe('group realtime stream', () => {
  test('two subscribers receive the same ordered frames, each equal to what send returned', async () => {
    const { ctx, ann, bob } = setup({ sseRetryMs: 2500 });
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
    const { ctx, ann, cy } = setup();
    const g = await groupWith(ctx, ann);
    for (const id of [g.id, 'no-such-group']) {
      const res = await ctx.json('groupChat/subscribeToGroup', { groupChatId: id }, cy);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(SPEC_ERRORS[403]);
    }
    expect((await ctx.json('groupChat/subscribeToGroup', { groupChatId: g.id })).body).toEqual(SPEC_ERRORS[401]);
  });

  test('member events: joined and left; the leaver’s stream ends, the others go on', async () => {
    const { ctx, ann, bob } = setup();
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
    const { ctx, ann, bob } = setup();
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
    const { ctx, ann, bob } = setup();
    const g = await groupWith(ctx, ann, [bob]);
    const a = await subscribe(ctx, ann, g.id);
    // Published, then bob subscribes within the same turn of the event loop: the batch holding
    // 'earlier' is still pending when his stream joins it.
    publishRecorded(ctx.deps, g.id, message(50, 'earlier'));
    const b = await subscribe(ctx, bob, g.id);
    publishRecorded(ctx.deps, g.id, message(51, 'later'));
    expect((await a.take(2)).map((f) => f.id)).toEqual(['50', '51']);
    expect((await b.nextData()).id).toBe('51');
    await a.close();
    await b.close();
  });

  test('inside a batch, an event the stream already sent is dropped and the rest still goes out', async () => {
    const { ctx, ann, bob } = setup();
    const g = await groupWith(ctx, ann, [bob]);
    const a = await subscribe(ctx, ann, g.id);
    await send(ctx, ann, g.id, 'm0');
    const sent = await a.nextData();
    const seq = Number(sent.id);
    // Resumed from the last event: its replay is empty and it has "sent" `seq`.
    const b = await subscribe(ctx, bob, g.id, String(seq));
    const again = { seq, data: sent.data, json: JSON.stringify(sent.data) };
    const next = { type: 'message.created', message: { id: 'later', content: 'm1' } };
    publishRecorded(ctx.deps, g.id, again);
    publishProgress(ctx.deps, g.id, { type: 'assistant.progress', text: '…' });
    publishRecorded(ctx.deps, g.id, { seq: seq + 1, data: next, json: JSON.stringify(next) });
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
    const { ctx, ann, bob } = setup();
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
    const { ctx, ann, bob } = setup();
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
    const { ctx, ann, bob } = setup();
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

  test('a resume whose events were pruned says stream.reset, then continues live', async () => {
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    const { ctx, ann } = setup({ groupEventRetentionDays: 1 }, () => clock);
    const g = await groupWith(ctx, ann);
    for (let i = 0; i < 3; i++) await send(ctx, ann, g.id, `old${i}`);
    clock += 2 * 86_400_000;
    await send(ctx, ann, g.id, 'new');
    pruneGroupEvents(ctx.db, 1, clock);
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
    const { ctx, ann, bob } = setup({ sseBufferEvents: 5 });
    const g = await groupWith(ctx, ann, [bob]);
    const fast = await subscribe(ctx, ann, g.id);
    const slow = await subscribe(ctx, bob, g.id);
    expect(ctx.deps.groupFanout.members(g.id)).toBe(2);
    const got: string[] = [];
    for (let i = 0; i < 30; i++) {
      await send(ctx, ann, g.id, `m${i}`);
      got.push((await fast.nextData()).data.message.content);
    }
    expect(got).toEqual(Array.from({ length: 30 }, (_, i) => `m${i}`));
    expect(ctx.deps.groupFanout.members(g.id)).toBe(1);
    expect(ctx.deps.heartbeats.size).toBe(1);
    // The slow reader gets what was already on its way, then the end: never all 30.
    await expect(slow.take(30)).rejects.toThrow('stream ended');
    await fast.close();
  }, 20_000);

  test('heartbeat comments on a quiet stream', async () => {
    const { ctx, ann } = setup({ sseHeartbeatSeconds: 1 });
    const g = await groupWith(ctx, ann);
    const s = await subscribe(ctx, ann, g.id);
    // The shared ticker's phase is not the stream's: the first beat comes one to two intervals after open.
    expect(await s.next(3500)).toEqual({ comment: 'heartbeat' });
    await s.close();
  });

  test('per-user limit on open streams: one more is 429, closing one frees a slot', async () => {
    const { ctx, ann } = setup({ maxStreamsPerUser: 2 });
    const g = await groupWith(ctx, ann);
    const s1 = await subscribe(ctx, ann, g.id);
    const s2 = await subscribe(ctx, ann, g.id);
    const refused = await ctx.call('groupChat/subscribeToGroup', { groupChatId: g.id }, ann);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBeTruthy();
    await s1.close();
    await Bun.sleep(5);
    const s3 = await subscribe(ctx, ann, g.id);
    await s2.close();
    await s3.close();
  });

  test('group.updated reaches subscribers when intelligent responses change', async () => {
    const { ctx, ann } = setup();
    const g = await groupWith(ctx, ann);
    const s = await subscribe(ctx, ann, g.id);
    await ctx.json('groupChat/setIntelligentResponses', { groupChatId: g.id, enabled: false }, ann);
    const f = await s.nextData();
    expect(f.data.type).toBe('group.updated');
    expect(f.data.groupChat).toMatchObject({ id: g.id, intelligentResponses: false });
    await s.close();
  });
});
