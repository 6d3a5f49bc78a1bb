import { sql } from 'drizzle-orm';
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, SPEC_ERRORS, type TestContext, type TestUser } from './helpers';
import type { Config } from '../src/config';
import { replyAsAdmin, supportLimitsOf } from '../src/support/support.rules';

// Generous: the suite shares small machines with other work; these tests make many requests.
setDefaultTimeout(30_000);

const T0 = Date.parse('2026-06-01T12:00:00.000Z');
const THREAD_KEYS = ['closedAt', 'createdAt', 'id', 'lastMessageAt', 'status', 'subject', 'unreadCount', 'updatedAt'];
const MESSAGE_KEYS = ['adminName', 'author', 'body', 'createdAt', 'id', 'readByAdminAt', 'readByUserAt', 'threadId'];

/** Two users and a clock that moves only when told (`tick`), so "newest activity first" is exact. */
async function setup(config: Partial<Config> = {}) {
  let clock = T0;
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config, now: () => clock });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  const tick = (ms = 1000) => (clock += ms);
  return { ctx, ann, bob, tick, now: () => clock };
}

const create = (ctx: TestContext, as: TestUser, subject: string, message = 'help please') => ctx.json('support/createThread', { subject, message }, as);

/** An admin's answer, as `parley support reply` writes it. */
const adminReply = (ctx: TestContext, threadId: string, message: string, now: number, extra: { close?: boolean; adminName?: string; adminEmail?: string } = {}) =>
  ctx.store.write((tx) => replyAsAdmin(tx, threadId, { message, ...extra }, supportLimitsOf(ctx.deps.config), now));

describe('support threads', () => {
  test('create, list, get, send, close: shapes, order and unread counts', async () => {
    const { ctx, ann, tick, now } = await setup();
    const first = await create(ctx, ann, '  Cannot sign in ', '  My password reset mail never came.  ');
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['message', 'thread']);
    expect(Object.keys(first.body.thread).sort()).toEqual(THREAD_KEYS);
    expect(Object.keys(first.body.message).sort()).toEqual(MESSAGE_KEYS);
    const at0 = new Date(T0).toISOString();
    expect(first.body.thread).toEqual({ id: expect.any(String), subject: 'Cannot sign in', status: 'open', createdAt: at0, updatedAt: at0, lastMessageAt: at0, closedAt: null, unreadCount: 0 });
    expect(first.body.message).toEqual({
      id: expect.any(String),
      threadId: first.body.thread.id,
      author: 'user',
      adminName: null,
      body: 'My password reset mail never came.',
      createdAt: at0,
      readByUserAt: at0,
      readByAdminAt: null,
    });
    const a = first.body.thread.id;
    tick();
    const b = (await create(ctx, ann, 'Billing')).body.thread.id;

    // Newest activity first: b, then a.
    expect((await ctx.json('support/listThreads', {}, ann)).body).toEqual({ threads: [expect.objectContaining({ id: b }), expect.objectContaining({ id: a })], nextCursor: null });

    // Two admin answers in `a`: it moves to the top with 2 unread; the admin's e-mail stays with the admins.
    tick();
    const reply = (await adminReply(ctx, a, 'Check your spam folder.', now(), { adminName: 'Sam', adminEmail: 'sam@admins.example' }))!;
    tick();
    await adminReply(ctx, a, 'Or tell me your e-mail.', now());
    const listed = (await ctx.json('support/listThreads', {}, ann)).body.threads;
    expect(listed.map((th: any) => [th.id, th.unreadCount])).toEqual([
      [a, 2],
      [b, 0],
    ]);
    expect(listed[0].lastMessageAt).toBe(new Date(now()).toISOString());

    // Reading the thread marks the answers read; messages oldest first.
    tick();
    const got = await ctx.json('support/getThread', { threadId: a }, ann);
    expect(got.status).toBe(200);
    expect(got.body.thread).toMatchObject({ id: a, unreadCount: 0 });
    expect(got.body.nextCursor).toBeNull();
    expect(got.body.messages.map((m: any) => [m.author, m.adminName, m.body])).toEqual([
      ['user', null, 'My password reset mail never came.'],
      ['admin', 'Sam', 'Check your spam folder.'],
      ['admin', null, 'Or tell me your e-mail.'],
    ]);
    expect(got.body.messages[1]).toMatchObject({ id: reply.message.id, readByUserAt: new Date(now()).toISOString(), readByAdminAt: expect.any(String) });
    expect(JSON.stringify(got.body)).not.toContain('sam@admins.example');
    expect((await ctx.json('support/listThreads', {}, ann)).body.threads[0].unreadCount).toBe(0);

    // The user answers; then closes; the status filter sees it.
    tick();
    const sent = await ctx.json('support/sendMessage', { threadId: b, message: 'Invoice 42 is wrong' }, ann);
    expect(sent.status).toBe(200);
    expect(sent.body.thread).toMatchObject({ id: b, status: 'open', lastMessageAt: new Date(now()).toISOString() });
    expect(sent.body.message).toMatchObject({ threadId: b, author: 'user', body: 'Invoice 42 is wrong', readByAdminAt: null });
    expect((await ctx.json('support/listThreads', {}, ann)).body.threads.map((th: any) => th.id)).toEqual([b, a]);
    tick();
    const closed = await ctx.json('support/closeThread', { threadId: a }, ann);
    expect(closed.body).toEqual({ thread: expect.objectContaining({ id: a, status: 'closed', closedAt: new Date(now()).toISOString() }) });
    // Closing again changes nothing.
    tick();
    expect((await ctx.json('support/closeThread', { threadId: a }, ann)).body.thread).toEqual(closed.body.thread);
    expect((await ctx.json('support/listThreads', { status: 'open' }, ann)).body.threads.map((th: any) => th.id)).toEqual([b]);
    expect((await ctx.json('support/listThreads', { status: 'closed' }, ann)).body.threads.map((th: any) => th.id)).toEqual([a]);
    expect((await ctx.json('support/listThreads', { status: 'all' }, ann)).body.threads).toHaveLength(2);
  });

  test('writing in a closed thread opens it again; an admin answer opens it too, unless it closes it', async () => {
    const { ctx, ann, tick, now } = await setup();
    const id = (await create(ctx, ann, 'Question')).body.thread.id;
    await ctx.json('support/closeThread', { threadId: id }, ann);
    tick();
    const again = await ctx.json('support/sendMessage', { threadId: id, message: 'One more thing' }, ann);
    expect(again.body.thread).toMatchObject({ status: 'open', closedAt: null });
    tick();
    expect((await adminReply(ctx, id, 'Done.', now(), { close: true }))!.thread).toMatchObject({ status: 'closed', closedAt: now() });
    // The user sees it closed, with the last word unread.
    expect((await ctx.json('support/listThreads', {}, ann)).body.threads[0]).toMatchObject({ id, status: 'closed', unreadCount: 1 });
    tick();
    expect((await adminReply(ctx, id, 'Actually, one question.', now()))!.thread).toMatchObject({ status: 'open', closedAt: null });
  });

  test("someone else's thread: 403 for every operation and nothing changes; unknown: 404; anonymous: 401", async () => {
    const { ctx, ann, bob } = await setup();
    const id = (await create(ctx, ann, 'Private')).body.thread.id;
    await adminReply(ctx, id, 'Answer', T0);
    for (const [path, body] of [
      ['support/getThread', { threadId: id }],
      ['support/sendMessage', { threadId: id, message: 'hijack' }],
      ['support/closeThread', { threadId: id }],
    ] as const) {
      expect(await ctx.json(path, body, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
      expect(await ctx.json(path, { ...body, threadId: 'no-such-thread' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
      expect(await ctx.json(path, body)).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });
    }
    expect((await ctx.json('support/createThread', { subject: 'x', message: 'y' })).status).toBe(401);
    expect((await ctx.json('support/listThreads', {})).status).toBe(401);
    // Bob's list is his own; Ann's thread is as it was, its answer still unread.
    expect((await ctx.json('support/listThreads', {}, bob)).body.threads).toEqual([]);
    expect((await ctx.json('support/listThreads', {}, ann)).body.threads).toEqual([expect.objectContaining({ id, status: 'open', unreadCount: 1 })]);
    expect(await ctx.count('support_messages')).toBe(2);
  });

  test('input refusals: blank or missing fields, too long (the configured limit), bad cursors', async () => {
    const { ctx, ann } = await setup({ supportMessageMaxChars: 50 });
    const issuePath = async (path: string, body: unknown) => {
      const r = await ctx.json(path, body, ann);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ defined: false, code: 'BAD_REQUEST', status: 400 });
      return r.body.data.issues[0].path;
    };
    expect(await issuePath('support/createThread', { subject: '   ', message: 'x' })).toEqual(['subject']);
    expect(await issuePath('support/createThread', { subject: 'x'.repeat(201), message: 'x' })).toEqual(['subject']);
    expect(await issuePath('support/createThread', { subject: 'Hi', message: ' \n ' })).toEqual(['message']);
    expect(await issuePath('support/createThread', { subject: 'Hi' })).toEqual(['message']);
    expect(await issuePath('support/createThread', { subject: 'Hi', message: 'x'.repeat(51) })).toEqual(['message']);
    const tooLong = await ctx.json('support/createThread', { subject: 'Hi', message: 'x'.repeat(51) }, ann);
    expect(tooLong.body.data.issues[0].message).toContain('50 characters');
    // Exactly the limit, with white space around it that is trimmed: accepted.
    const ok = await create(ctx, ann, 'Hi', `  ${'x'.repeat(50)}  `);
    expect(ok.status).toBe(200);
    const id = ok.body.thread.id;
    expect(await issuePath('support/sendMessage', { threadId: id, message: 'y'.repeat(51) })).toEqual(['message']);
    expect(await issuePath('support/sendMessage', { threadId: id })).toEqual(['message']);
    expect(await issuePath('support/getThread', {})).toEqual(['threadId']);
    expect(await issuePath('support/getThread', { threadId: id, cursor: 'not-a-cursor' })).toEqual(['cursor']);
    expect(await issuePath('support/listThreads', { cursor: 'bm9wZQ' })).toEqual(['cursor']);
    expect(await issuePath('support/listThreads', { status: 'pending' })).toEqual(['status']);
    expect(await issuePath('support/listThreads', { limit: 0 })).toEqual(['limit']);
    // Nothing of the refused writes was stored.
    expect(await ctx.count('support_threads')).toBe(1);
    expect(await ctx.count('support_messages')).toBe(1);
  });

  test('the open-thread cap: a new thread or reopening one past it is 409; closing one makes room', async () => {
    const { ctx, ann, bob } = await setup({ supportMaxOpenThreads: 2 });
    const one = (await create(ctx, ann, 'one')).body.thread.id;
    await create(ctx, ann, 'two');
    const third = await create(ctx, ann, 'three');
    expect(third.status).toBe(409);
    expect(third.body).toMatchObject({ defined: false, code: 'CONFLICT', status: 409, data: {} });
    expect(third.body.message).toContain('2 open support conversations');
    // Per user: Bob is not affected.
    expect((await create(ctx, bob, 'mine')).status).toBe(200);
    await ctx.json('support/closeThread', { threadId: one }, ann);
    const three = (await create(ctx, ann, 'three')).body.thread.id;
    // `one` is closed and two are open: writing in it would open a third.
    expect((await ctx.json('support/sendMessage', { threadId: one, message: 'again' }, ann)).status).toBe(409);
    expect((await ctx.json('support/getThread', { threadId: one }, ann)).body.messages).toHaveLength(1);
    await ctx.json('support/closeThread', { threadId: three }, ann);
    expect((await ctx.json('support/sendMessage', { threadId: one, message: 'again' }, ann)).body.thread.status).toBe('open');
  });

  test('the cap holds when many threads are asked for at once', async () => {
    const { ctx, ann } = await setup({ supportMaxOpenThreads: 3 });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => create(ctx, ann, `burst ${i}`)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 409, 409, 409, 409, 409]);
    expect((await ctx.json('support/listThreads', { status: 'open' }, ann)).body.threads).toHaveLength(3);
  });

  test('writes take the write rate limit (PARLEY_RATE_LIMIT_WRITE), per operation', async () => {
    const { ctx, ann } = await setup({ rateLimitWrite: { capacity: 2, perMs: 60_000 }, supportMaxOpenThreads: 10 });
    const id = (await create(ctx, ann, 'one')).body.thread.id;
    expect((await create(ctx, ann, 'two')).status).toBe(200);
    const limited = await create(ctx, ann, 'three');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: 429 });
    expect(Number(limited.res.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another operation has its own bucket; reads have none.
    expect((await ctx.json('support/sendMessage', { threadId: id, message: 'a' }, ann)).status).toBe(200);
    expect((await ctx.json('support/sendMessage', { threadId: id, message: 'b' }, ann)).status).toBe(200);
    expect((await ctx.json('support/sendMessage', { threadId: id, message: 'c' }, ann)).status).toBe(429);
    for (let i = 0; i < 4; i++) expect((await ctx.json('support/getThread', { threadId: id }, ann)).status).toBe(200);
    expect(await ctx.count('support_messages')).toBe(4);
  });

  test('pages: threads by newest activity, messages backwards from the newest', async () => {
    const { ctx, ann, tick, now } = await setup({ supportMaxOpenThreads: 10 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await create(ctx, ann, `t${i}`)).body.thread.id);
      tick();
    }
    const p1 = (await ctx.json('support/listThreads', { limit: 2 }, ann)).body;
    const p2 = (await ctx.json('support/listThreads', { limit: 2, cursor: p1.nextCursor }, ann)).body;
    const p3 = (await ctx.json('support/listThreads', { limit: 2, cursor: p2.nextCursor }, ann)).body;
    expect([...p1.threads, ...p2.threads, ...p3.threads].map((th: any) => th.id)).toEqual([...ids].reverse());
    expect(p3.nextCursor).toBeNull();

    const id = ids[0]!;
    for (let i = 1; i <= 6; i++) {
      await adminReply(ctx, id, `answer ${i}`, now()); // same millisecond for two of them: ids break the tie
      if (i % 2) tick();
    }
    const newest = (await ctx.json('support/getThread', { threadId: id, limit: 3 }, ann)).body;
    expect(newest.messages.map((m: any) => m.body)).toEqual(['answer 4', 'answer 5', 'answer 6']);
    const older = (await ctx.json('support/getThread', { threadId: id, limit: 3, cursor: newest.nextCursor }, ann)).body;
    expect(older.messages.map((m: any) => m.body)).toEqual(['answer 1', 'answer 2', 'answer 3']);
    const oldest = (await ctx.json('support/getThread', { threadId: id, limit: 3, cursor: older.nextCursor }, ann)).body;
    expect(oldest).toMatchObject({ messages: [expect.objectContaining({ body: 'help please' })], nextCursor: null });
    // Opening any page marked every answer read.
    expect((await ctx.json('support/listThreads', { limit: 5 }, ann)).body.threads.find((th: any) => th.id === id).unreadCount).toBe(0);
  });

  test("a user's threads and messages go with the user", async () => {
    const { ctx, ann, bob } = await setup();
    const id = (await create(ctx, ann, 'mine')).body.thread.id;
    await adminReply(ctx, id, 'ok', T0);
    await create(ctx, bob, 'his');
    await ctx.query(sql`DELETE FROM users WHERE id = ${ann.user.id}`);
    expect(await ctx.count('support_threads')).toBe(1);
    expect(await ctx.count('support_messages')).toBe(1);
  });
});
