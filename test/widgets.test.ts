import { describe, expect, test, setDefaultTimeout } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createTestContext, describeSqliteOnly, failureOf, SPEC_ERRORS } from './helpers';
import { addWriter, createConversation } from '../src/chat/conversation.store';
import { createWidget } from '../src/widgets/widget.store';
import { runOnSqlite, writeOnSqlite } from '../src/db/store';

// Generous: the suite shares small machines with other work; these tests make many requests.
setDefaultTimeout(30_000);

async function setup() {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }, { email: 'eve@example.org' }] });
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
