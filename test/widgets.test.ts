import { describe, expect, test, setDefaultTimeout } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createTestContext, describeSqliteOnly, failureOf, SPEC_ERRORS } from './helpers';
import { addWriter, createConversation } from '../src/chat/conversation.store';
import { createWidget } from '../src/widgets/widget.store';
import { runOnSqlite, writeOnSqlite } from '../src/db/store';
import type { Config } from '../src/config';

// Generous: the suite shares small machines with other work; these tests make many requests.
setDefaultTimeout(30_000);

async function setup(config: Partial<Config> = {}) {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }, { email: 'eve@example.org' }], config });
  const [ann, bob, eve] = ctx.users as [any, any, any];
  const conv = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Plans' }));
  await ctx.store.read((tx) => addWriter(tx, conv.id, bob.user.id));
  const widget = await ctx.store.read((tx) => createWidget(tx, { conversationId: conv.id, responseId: 'resp_1', widgetType: 'canvas', title: 'Trip', document: { topic: 'Trip', goal: 'plan', content: '# Trip' } }, Date.now()));
  return { ctx, ann, bob, eve, conv, widget };
}

describe('widgets', () => {
  test('widget/get returns the widget to readers; 403 to others; 404 unknown; 401 anonymous', async () => {
    const { ctx, ann, bob, eve, widget } = await setup();
    const ok = await ctx.json('widget/get', { widgetId: widget.id }, ann);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      id: widget.id,
      conversationId: widget.conversationId,
      responseId: 'resp_1',
      widgetType: 'canvas',
      title: 'Trip',
      document: { topic: 'Trip', goal: 'plan', content: '# Trip' },
      createdAt: new Date(widget.createdAt).toISOString(),
      updatedAt: new Date(widget.updatedAt).toISOString(),
    });
    expect((await ctx.json('widget/get', { widgetId: widget.id }, bob)).status).toBe(200);
    expect((await ctx.json('widget/get', { widgetId: widget.id }, eve)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('widget/get', { widgetId: 'nope' }, ann)).body).toEqual(SPEC_ERRORS[404]);
    expect((await ctx.json('widget/get', { widgetId: widget.id })).body).toEqual(SPEC_ERRORS[401]);
  });

  test('getOrCreateThread creates once, then returns the same thread with its messages in order', async () => {
    const { ctx, ann, widget } = await setup();
    const first = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann);
    expect(first.status).toBe(200);
    expect(first.body.created).toBe(true);
    const thread = first.body.thread;
    expect(Object.keys(thread).sort()).toEqual(['createdAt', 'id', 'messages', 'status', 'updatedAt', 'userId', 'widgetId']);
    expect(thread).toMatchObject({ widgetId: widget.id, userId: ann.user.id, status: 'active', messages: [] });
    expect(thread.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const sent = [];
    for (let i = 0; i < 5; i++) {
      const m = await ctx.json('widget/addThreadMessage', { threadId: thread.id, data: { role: 'user', text: `m${i}`, n: i } }, ann);
      expect(m.status).toBe(200);
      expect(Object.keys(m.body).sort()).toEqual(['createdAt', 'data', 'id', 'threadId']);
      sent.push(m.body);
    }
    const again = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann);
    expect(again.body.created).toBe(false);
    expect(again.body.thread.id).toBe(thread.id);
    expect(again.body.thread.messages).toEqual(sent);
    expect(again.body.thread.messages.map((m: any) => m.data.n)).toEqual([0, 1, 2, 3, 4]);
    expect(again.body.nextBefore).toBeNull();
  });

  test('each user gets their own thread; errors 403/404/401', async () => {
    const { ctx, ann, bob, eve, widget } = await setup();
    const a = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann);
    const b = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, bob);
    expect(b.body.created).toBe(true);
    expect(b.body.thread.id).not.toBe(a.body.thread.id);
    expect(b.body.thread.userId).toBe(bob.user.id);
    expect(await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, eve)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('widget/getOrCreateThread', { widgetId: 'missing' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect((await ctx.json('widget/getOrCreateThread', { widgetId: widget.id })).status).toBe(401);
    expect((await ctx.json('widget/getOrCreateThread', {}, ann)).status).toBe(400);
  });

  test('many concurrent getOrCreateThread calls make exactly one active thread', async () => {
    const { ctx, ann, widget } = await setup();
    const results = await Promise.all(Array.from({ length: 50 }, () => ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.thread.id)).size).toBe(1);
    expect(results.filter((r) => r.body.created)).toHaveLength(1);
    const [rows] = await ctx.query<{ n: number | string }>(sql`SELECT count(*) AS n FROM widget_threads WHERE status = 'active'`);
    expect(Number(rows!.n)).toBe(1);
  });

  test('the database itself refuses a second active thread for the same widget and user', async () => {
    const { ctx, ann, widget } = await setup();
    const insert = (id: string, status: string) =>
      ctx.query(sql`INSERT INTO widget_threads (id, widget_id, user_id, status, created_at, updated_at) VALUES (${id}, ${widget.id}, ${ann.user.id}, ${status}, 0, 0)`);
    await insert('t1', 'active');
    expect(await failureOf(insert('t2', 'active'))).toMatch(/UNIQUE|duplicate key/);
    await insert('t3', 'archived');
    await insert('t4', 'archived');
  });

  test('addThreadMessage: owner only (403), unknown thread 404, data must be an object (400), access lost → 403', async () => {
    const { ctx, ann, bob, conv, widget } = await setup();
    const bobThread = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, bob)).body.thread;
    expect(await ctx.json('widget/addThreadMessage', { threadId: bobThread.id, data: { x: 1 } }, ann)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('widget/addThreadMessage', { threadId: 'nope', data: { x: 1 } }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect((await ctx.json('widget/addThreadMessage', { threadId: bobThread.id, data: 'text' }, bob)).status).toBe(400);
    expect((await ctx.json('widget/addThreadMessage', { threadId: bobThread.id, data: { x: 1 } })).status).toBe(401);
    await ctx.query(sql`DELETE FROM conversation_writers WHERE conversation_id = ${conv.id}`);
    expect((await ctx.json('widget/addThreadMessage', { threadId: bobThread.id, data: { x: 1 } }, bob)).status).toBe(403);
  });
});

/** `n` messages of about `size` bytes each added to `threadId` as `as`; their bodies. */
async function addMessages(ctx: any, as: any, threadId: string, n: number, size = 20) {
  const sent = [];
  for (let i = 0; i < n; i++) {
    const m = await ctx.json('widget/addThreadMessage', { threadId, data: { n: i, text: 'x'.repeat(Math.max(0, size - 20)) } }, as);
    expect(m.status).toBe(200);
    sent.push(m.body);
  }
  return sent;
}

describe('widget threads: pages', () => {
  test('getOrCreateThread answers the newest 50 messages and a cursor; listThreadMessages walks back to the first, in order, nothing twice', async () => {
    const { ctx, ann, widget } = await setup({ rateLimitWrite: undefined });
    const thread = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    const sent = await addMessages(ctx, ann, thread.id, 120);
    const first = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann);
    expect(first.body.created).toBe(false);
    expect(first.body.thread.messages).toEqual(sent.slice(70));
    expect(first.body.nextBefore).toBe(sent[70].id);
    const seen = [...first.body.thread.messages];
    let before = first.body.nextBefore;
    const pages = [];
    while (before) {
      const page = await ctx.json('widget/listThreadMessages', { threadId: thread.id, before, limit: 30 }, ann);
      expect(page.status).toBe(200);
      pages.push(page.body.messages.length);
      seen.unshift(...page.body.messages);
      before = page.body.nextBefore;
    }
    expect(pages).toEqual([30, 30, 10]);
    expect(seen).toEqual(sent);
    // No `before` (or an empty one): the newest page; a `before` from another thread or none at all: 400 naming it.
    expect((await ctx.json('widget/listThreadMessages', { threadId: thread.id, limit: 2 }, ann)).body).toEqual({ messages: sent.slice(118), nextBefore: sent[118].id });
    expect((await ctx.json('widget/listThreadMessages', { threadId: thread.id, before: '', limit: 100 }, ann)).body).toEqual({ messages: sent.slice(20), nextBefore: sent[20].id });
    const bad = await ctx.json('widget/listThreadMessages', { threadId: thread.id, before: 'nope' }, ann);
    expect(bad.status).toBe(400);
    expect(bad.body.data.issues.map((i: any) => i.path)).toEqual([['before']]);
    expect((await ctx.json('widget/listThreadMessages', { threadId: thread.id, limit: 101 }, ann)).status).toBe(400);
  });

  test('a page holds at most 1 MiB of messages (one at least): a read costs the page, not the thread', async () => {
    const { ctx, ann, widget } = await setup({ rateLimitWrite: undefined, widgetMessageMaxBytes: 400 * 1024, widgetThreadMaxBytes: 64 * 1024 * 1024 });
    const thread = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    const sent = await addMessages(ctx, ann, thread.id, 8, 300 * 1024);
    const first = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann);
    expect(first.body.thread.messages.map((m: any) => m.data.n)).toEqual([5, 6, 7]);
    expect(first.body.nextBefore).toBe(sent[5].id);
    const one = await ctx.json('widget/listThreadMessages', { threadId: thread.id, before: sent[5].id, limit: 1 }, ann);
    expect(one.body.messages.map((m: any) => m.data.n)).toEqual([4]);
    // A single message larger than the page's bytes still comes, alone.
    const big = await setup({ rateLimitWrite: undefined, widgetMessageMaxBytes: 2 * 1024 * 1024, widgetThreadMaxBytes: 64 * 1024 * 1024 });
    const bigThread = (await big.ctx.json('widget/getOrCreateThread', { widgetId: big.widget.id }, big.ann)).body.thread;
    await addMessages(big.ctx, big.ann, bigThread.id, 2, 1536 * 1024);
    const page = await big.ctx.json('widget/listThreadMessages', { threadId: bigThread.id }, big.ann);
    expect(page.body.messages.map((m: any) => m.data.n)).toEqual([1]);
    expect(page.body.nextBefore).toBe(page.body.messages[0].id);
  });

  test('listThreadMessages: the owner only (403), while they can read the widget; unknown thread 404; archived threads stay readable', async () => {
    const { ctx, ann, bob, conv, widget } = await setup();
    const thread = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, bob)).body.thread;
    const [m] = await addMessages(ctx, bob, thread.id, 1);
    expect(await ctx.json('widget/listThreadMessages', { threadId: thread.id }, ann)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('widget/listThreadMessages', { threadId: 'nope' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    await ctx.json('widget/archiveThread', { threadId: thread.id }, bob);
    expect((await ctx.json('widget/listThreadMessages', { threadId: thread.id }, bob)).body).toEqual({ messages: [m], nextBefore: null });
    await ctx.query(sql`DELETE FROM conversation_writers WHERE conversation_id = ${conv.id}`);
    expect((await ctx.json('widget/listThreadMessages', { threadId: thread.id }, bob)).status).toBe(403);
  });
});

describe('widget threads: caps', () => {
  const capOf = (body: any) => ({ status: body.status, code: body.code, cap: body.data.cap, max: body.data.max });

  test('a message over PARLEY_WIDGET_MESSAGE_MAX_BYTES: 413 naming the setting, nothing stored; one at the limit is taken', async () => {
    const { ctx, ann, widget } = await setup({ widgetMessageMaxBytes: 1000 });
    const thread = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    const exact = { text: 'x'.repeat(1000 - JSON.stringify({ text: '' }).length) };
    expect((await ctx.json('widget/addThreadMessage', { threadId: thread.id, data: exact }, ann)).status).toBe(200);
    const over = await ctx.json('widget/addThreadMessage', { threadId: thread.id, data: { text: `${exact.text}y` } }, ann);
    expect(capOf(over.body)).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE', cap: 'PARLEY_WIDGET_MESSAGE_MAX_BYTES', max: 1000 });
    expect(over.body.message).toContain('1001 bytes');
    // Multi-byte characters count as their UTF-8 bytes.
    const wide = await ctx.json('widget/addThreadMessage', { threadId: thread.id, data: { text: 'é'.repeat(500) } }, ann);
    expect(wide.status).toBe(413);
    // The body limit follows the setting: the largest message and room for the rest.
    const body = await ctx.json('widget/addThreadMessage', JSON.stringify({ threadId: thread.id, data: { text: 'x'.repeat(6000) } }), ann);
    expect(capOf(body.body)).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE', cap: 'PARLEY_WIDGET_MESSAGE_MAX_BYTES', max: 1000 });
    expect(body.body.message).toBe('This request is over 5096 bytes: the most this server allows is 1000 (PARLEY_WIDGET_MESSAGE_MAX_BYTES). Send a smaller one.');
    expect(await ctx.count('widget_thread_messages')).toBe(1);
  });

  test('a thread takes PARLEY_WIDGET_THREAD_MAX_MESSAGES and PARLEY_WIDGET_THREAD_MAX_BYTES; archiving starts a new one', async () => {
    const { ctx, ann, widget } = await setup({ widgetThreadMaxMessages: 3, widgetThreadMaxBytes: 2048 });
    const thread = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    await addMessages(ctx, ann, thread.id, 3);
    const full = await ctx.json('widget/addThreadMessage', { threadId: thread.id, data: { n: 3 } }, ann);
    expect(capOf(full.body)).toEqual({ status: 409, code: 'CONFLICT', cap: 'PARLEY_WIDGET_THREAD_MAX_MESSAGES', max: 3 });
    expect(full.body.message).toMatch(/^This thread holds 3 messages: the most this server allows is 3 \(PARLEY_WIDGET_THREAD_MAX_MESSAGES\)\. Archive it/);
    await ctx.json('widget/archiveThread', { threadId: thread.id }, ann);
    const next = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    await addMessages(ctx, ann, next.id, 1, 1500);
    const heavy = await ctx.json('widget/addThreadMessage', { threadId: next.id, data: { text: 'x'.repeat(600) } }, ann);
    expect(capOf(heavy.body)).toEqual({ status: 409, code: 'CONFLICT', cap: 'PARLEY_WIDGET_THREAD_MAX_BYTES', max: 2048 });
    expect(await ctx.count('widget_thread_messages')).toBe(4);
  });

  test("a user's threads together take PARLEY_WIDGET_USER_MAX_MESSAGES and PARLEY_WIDGET_USER_MAX_BYTES, archived ones included; widget/deleteThread frees room", async () => {
    const { ctx, ann, bob, widget } = await setup({ widgetUserMaxMessages: 4, widgetUserMaxBytes: 4096 });
    const first = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    await addMessages(ctx, ann, first.id, 3);
    await ctx.json('widget/archiveThread', { threadId: first.id }, ann);
    const second = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    await addMessages(ctx, ann, second.id, 1);
    const full = await ctx.json('widget/addThreadMessage', { threadId: second.id, data: { n: 9 } }, ann);
    expect(capOf(full.body)).toEqual({ status: 409, code: 'CONFLICT', cap: 'PARLEY_WIDGET_USER_MAX_MESSAGES', max: 4 });
    // Another user's room is their own.
    const bobs = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, bob)).body.thread;
    await addMessages(ctx, bob, bobs.id, 1);
    expect(await ctx.json('widget/deleteThread', { threadId: first.id }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('widget/deleteThread', { threadId: 'nope' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect((await ctx.json('widget/deleteThread', { threadId: first.id }, ann)).body).toEqual({ success: true });
    expect(await ctx.json('widget/listThreadMessages', { threadId: first.id }, ann)).toMatchObject({ status: 404 });
    await addMessages(ctx, ann, second.id, 2, 1800);
    const heavy = await ctx.json('widget/addThreadMessage', { threadId: second.id, data: { text: 'x'.repeat(600) } }, ann);
    expect(capOf(heavy.body)).toEqual({ status: 409, code: 'CONFLICT', cap: 'PARLEY_WIDGET_USER_MAX_BYTES', max: 4096 });
  });

  test('PARLEY_WIDGET_THREADS_MAX_PER_USER: archiving and asking again makes no thread past it (409); deleting one makes room', async () => {
    const { ctx, ann, widget } = await setup({ widgetThreadsMaxPerUser: 2 });
    const ids = [];
    for (let i = 0; i < 2; i++) {
      const got = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann);
      expect(got.body.created).toBe(true);
      ids.push(got.body.thread.id);
      await ctx.json('widget/archiveThread', { threadId: got.body.thread.id }, ann);
    }
    const third = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann);
    expect(capOf(third.body)).toEqual({ status: 409, code: 'CONFLICT', cap: 'PARLEY_WIDGET_THREADS_MAX_PER_USER', max: 2 });
    expect(third.body.message).toContain('widget/deleteThread');
    await ctx.json('widget/deleteThread', { threadId: ids[0] }, ann);
    expect((await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.created).toBe(true);
  });

  test('writes are under the write rate limit: past it 429 with Retry-After, nothing stored', async () => {
    const { ctx, ann, widget } = await setup({ rateLimitWrite: { capacity: 3, perMs: 60_000 } });
    const thread = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    await addMessages(ctx, ann, thread.id, 3);
    const res = await ctx.call('widget/addThreadMessage', { threadId: thread.id, data: { n: 3 } }, ann);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await ctx.count('widget_thread_messages')).toBe(3);
  });
});

describe('archiving a thread', () => {
  test('archiveThread retires the thread; the next getOrCreateThread makes a new one; archived threads take no messages', async () => {
    const { ctx, ann, bob, widget } = await setup();
    const first = (await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann)).body.thread;
    await ctx.json('widget/addThreadMessage', { threadId: first.id, data: { text: 'old' } }, ann);
    expect(await ctx.json('widget/archiveThread', { threadId: first.id }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('widget/archiveThread', { threadId: 'nope' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect((await ctx.json('widget/archiveThread', { threadId: first.id })).status).toBe(401);
    expect((await ctx.json('widget/archiveThread', { threadId: first.id }, ann)).body).toEqual({ success: true });
    expect((await ctx.json('widget/archiveThread', { threadId: first.id }, ann)).body).toEqual({ success: true });
    const late = await ctx.json('widget/addThreadMessage', { threadId: first.id, data: { text: 'late' } }, ann);
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ defined: false, code: 'CONFLICT', status: 409 });
    const next = await ctx.json('widget/getOrCreateThread', { widgetId: widget.id }, ann);
    expect(next.body.created).toBe(true);
    expect(next.body.thread.id).not.toBe(first.id);
    expect(next.body.thread.messages).toEqual([]);
    const statuses = await ctx.query(sql`SELECT status FROM widget_threads WHERE user_id = ${ann.user.id} ORDER BY created_at, id`);
    expect(statuses).toEqual([{ status: 'archived' }, { status: 'active' }]);
  });
});

// SQLite's own concurrency: connections of several processes on one file. (The same races on
// PostgreSQL: test/store-both.test.ts.)
describeSqliteOnly('races across connections', () => {
  test('workers on separate connections: one active thread, no lost credit grant, one grant per adId', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { openDatabase } = await import('../src/db/connection');
    const { migrate } = await import('../src/db/migrate');
    const { createUser } = await import('../src/account/account.store');
    const { bonusBalanceOf } = await import('../src/credits/credit.store');
    const file = join(mkdtempSync(join(tmpdir(), 'parley-race-')), 'race.db');
    const db = openDatabase(file);
    migrate(db.$client);
    const user = writeOnSqlite(db, (tx) => createUser(tx, { email: 'ann@example.org' }, Date.now()));
    const conv = runOnSqlite(db, (tx) => createConversation(tx, { ownerId: user.id }));
    const widget = runOnSqlite(db, (tx) => createWidget(tx, { conversationId: conv.id, responseId: 'r', widgetType: 'canvas' }, Date.now()));
    const workers = 4;
    const rounds = 10;
    const results = await Promise.all(
      Array.from({ length: workers }, (_, worker) => {
        const w = new Worker(new URL('./fixtures/concurrent-worker.ts', import.meta.url).href);
        return new Promise<{ threads: string[]; created: number }>((resolve, reject) => {
          w.onmessage = (e) => (resolve(e.data), w.terminate());
          w.onerror = (e) => reject(e);
          w.postMessage({ file, widgetId: widget.id, userId: user.id, rounds, worker });
        });
      }),
    );
    expect(new Set(results.flatMap((r) => r.threads)).size).toBe(1);
    expect(results.reduce((n, r) => n + r.created, 0)).toBe(1);
    expect(runOnSqlite(db, (tx) => bonusBalanceOf(tx, user.id))).toBe(workers * rounds + 1000);
    db.$client.close();
  }, 60_000);
});
