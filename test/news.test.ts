import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { dirname, join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createTestContext, onPg, SPEC_ERRORS, type TestContext } from './helpers';
import { createNewsPost } from '../src/news/news.store';

// Requests and CLI processes: shared machines can be slow, and nothing here asserts on time.
setDefaultTimeout(60_000);

const HOUR = 3_600_000;

async function setup() {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], durable: true });
  const [ann, bob] = ctx.users as [any, any];
  return { ctx, ann, bob };
}

/** A post published `hoursAfterAnn` hours after Ann's account was made (negative: before). */
const post = (ctx: TestContext, at: number, title: string) => ctx.store.write((tx) => createNewsPost(tx, { title, body: `**${title}**` }, at));

describe('news over HTTP', () => {
  test('list: newest first with read state and the unread count; markRead by ids and all; per user', async () => {
    const { ctx, ann, bob } = await setup();
    const t0 = Math.max(ann.user.createdAt, bob.user.createdAt);
    const first = await post(ctx, t0 + HOUR, 'First');
    const second = await post(ctx, t0 + 2 * HOUR, 'Second');
    const third = await post(ctx, t0 + 3 * HOUR, 'Third');

    const list = await ctx.json('news/list', {}, ann);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      posts: [third, second, first].map((p) => ({ id: p.id, title: p.title, body: p.body, createdAt: new Date(p.createdAt).toISOString(), read: false })),
      unreadCount: 3,
      hasMore: false,
    });

    const marked = await ctx.json('news/markRead', { ids: [second.id, second.id] }, ann);
    expect(marked).toMatchObject({ status: 200, body: { success: true, unreadCount: 2 } });
    const after = (await ctx.json('news/list', {}, ann)).body;
    expect(after.posts.map((p: any) => [p.title, p.read])).toEqual([
      ['Third', false],
      ['Second', true],
      ['First', false],
    ]);
    expect(after.unreadCount).toBe(2);
    expect((await ctx.json('news/list', { unreadOnly: true }, ann)).body.posts.map((p: any) => p.title)).toEqual(['Third', 'First']);
    // Marking again changes nothing.
    expect((await ctx.json('news/markRead', { ids: [second.id] }, ann)).body.unreadCount).toBe(2);

    // Bob's read state is his own.
    expect((await ctx.json('news/list', {}, bob)).body.unreadCount).toBe(3);

    expect((await ctx.json('news/markRead', { all: true }, ann)).body).toEqual({ success: true, unreadCount: 0 });
    expect((await ctx.json('news/list', { unreadOnly: true }, ann)).body).toEqual({ posts: [], unreadCount: 0, hasMore: false });
    expect((await ctx.json('news/list', {}, ann)).body.posts.every((p: any) => p.read)).toBe(true);
    expect((await ctx.json('news/list', {}, bob)).body.unreadCount).toBe(3);
    expect(await ctx.count('news_reads')).toBe(3);

    // A post published later is unread again.
    await post(ctx, t0 + 4 * HOUR, 'Fourth');
    expect((await ctx.json('news/list', { unreadOnly: true }, ann)).body.posts.map((p: any) => p.title)).toEqual(['Fourth']);
  });

  test('posts older than the account read as read; unknown ids are skipped', async () => {
    const { ctx, ann } = await setup();
    const old = await post(ctx, ann.user.createdAt - 24 * HOUR, 'Before you came');
    const fresh = await post(ctx, ann.user.createdAt + HOUR, 'Welcome');
    const list = (await ctx.json('news/list', {}, ann)).body;
    expect(list.posts.map((p: any) => [p.id, p.read])).toEqual([
      [fresh.id, false],
      [old.id, true],
    ]);
    expect(list.unreadCount).toBe(1);
    // A post deleted since the client listed it: skipped, not an error.
    const gone = '01a21743-d5f2-76a5-a6a1-2998a030531c';
    expect((await ctx.json('news/markRead', { ids: [gone, fresh.id] }, ann)).body).toEqual({ success: true, unreadCount: 0 });
    expect(await ctx.count('news_reads')).toBe(1);
  });

  test('pages: limit, before and hasMore, newest first', async () => {
    const { ctx, ann } = await setup();
    const posts = [];
    for (let i = 0; i < 5; i++) posts.push(await post(ctx, ann.user.createdAt + (i + 1) * HOUR, `P${i}`));
    const page1 = (await ctx.json('news/list', { limit: 2 }, ann)).body;
    expect(page1.posts.map((p: any) => p.title)).toEqual(['P4', 'P3']);
    expect(page1).toMatchObject({ hasMore: true, unreadCount: 5 });
    const page2 = (await ctx.json('news/list', { limit: 2, before: page1.posts[1].id }, ann)).body;
    expect(page2.posts.map((p: any) => p.title)).toEqual(['P2', 'P1']);
    expect(page2.hasMore).toBe(true);
    // The cursor holds after its post was deleted (ids are time-ordered).
    await ctx.query(sql`DELETE FROM news_posts WHERE id = ${page2.posts[1].id}`);
    const page3 = (await ctx.json('news/list', { limit: 2, before: page2.posts[1].id }, ann)).body;
    expect(page3).toMatchObject({ hasMore: false, unreadCount: 4 });
    expect(page3.posts.map((p: any) => p.title)).toEqual(['P0']);
    expect((await ctx.json('news/list', { limit: 2, before: posts[0]!.id }, ann)).body).toEqual({ posts: [], unreadCount: 4, hasMore: false });
  });

  test('refusals: 400 for bad input, 401 without a credential', async () => {
    const { ctx, ann } = await setup();
    const p = await post(ctx, ann.user.createdAt + HOUR, 'x');
    const bad = async (path: string, body: unknown) => {
      const res = await ctx.json(path, body, ann);
      return { status: res.status, code: res.body.code, paths: res.body.data?.issues?.map((i: any) => i.path.join('.')) };
    };
    for (const limit of [0, 51, 1.5]) expect(await bad('news/list', { limit })).toMatchObject({ status: 400, paths: ['limit'] });
    expect(await bad('news/list', { before: 'not-an-id' })).toMatchObject({ status: 400, paths: ['before'] });
    expect(await bad('news/list', { unreadOnly: 'yes' })).toMatchObject({ status: 400, paths: ['unreadOnly'] });
    expect(await bad('news/markRead', {})).toMatchObject({ status: 400, code: 'BAD_REQUEST', paths: [''] });
    expect(await bad('news/markRead', { ids: [p.id], all: true })).toMatchObject({ status: 400, paths: [''] });
    expect(await bad('news/markRead', { all: false })).toMatchObject({ status: 400, paths: ['all'] });
    expect(await bad('news/markRead', { ids: [] })).toMatchObject({ status: 400, paths: ['ids'] });
    expect((await bad('news/markRead', { ids: Array.from({ length: 101 }, () => p.id) })).status).toBe(400);
    expect(await bad('news/markRead', { ids: ['x'] })).toMatchObject({ status: 400, paths: ['ids.0'] });
    expect(await ctx.count('news_reads')).toBe(0);
    for (const path of ['news/list', 'news/markRead']) expect(await ctx.json(path, { all: true })).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });
  });

  test('read marks go with their post and with their user', async () => {
    const { ctx, ann, bob } = await setup();
    const a = await post(ctx, ann.user.createdAt + HOUR, 'a');
    const b = await post(ctx, ann.user.createdAt + 2 * HOUR, 'b');
    await ctx.json('news/markRead', { all: true }, ann);
    await ctx.json('news/markRead', { all: true }, bob);
    expect(await ctx.count('news_reads')).toBe(4);
    await ctx.query(sql`DELETE FROM news_posts WHERE id = ${a.id}`);
    expect(await ctx.count('news_reads')).toBe(2);
    await ctx.query(sql`DELETE FROM users WHERE id = ${bob.user.id}`);
    expect(await ctx.query(sql`SELECT post_id, user_id FROM news_reads`)).toEqual([{ post_id: b.id, user_id: ann.user.id }]);
  });
});

/** Run the CLI from source against the context's database (its SQLite file, or its PostgreSQL database). */
async function parley(ctx: TestContext, args: string[], env: Record<string, string> = {}) {
  const where = onPg ? { PARLEY_DATABASE_URL: ctx.deps.config.databaseUrl! } : { PARLEY_DATA_DIR: dirname(ctx.db.$client.filename) };
  const p = Bun.spawn([process.execPath, join(import.meta.dir, '../cli/main.ts'), ...args], {
    env: { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-news-cli-')), ...where, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

describe('parley news', () => {
  test('post, list and delete with --json; users see the post at once', async () => {
    const { ctx, ann } = await setup();
    const posted = await parley(ctx, ['news', 'post', '--title', '  Maintenance tonight ', '--body', 'The server restarts at **22:00** UTC.\n\nSorry!', '--json']);
    expect({ code: posted.code, err: posted.err }).toEqual({ code: 0, err: '' });
    const created = JSON.parse(posted.out);
    expect(Object.keys(created).sort()).toEqual(['body', 'createdAt', 'id', 'title']);
    expect(created).toMatchObject({ title: 'Maintenance tonight', body: 'The server restarts at **22:00** UTC.\n\nSorry!' });

    const seen = (await ctx.json('news/list', {}, ann)).body;
    expect(seen).toEqual({ posts: [{ ...created, read: false }], unreadCount: 1, hasMore: false });
    await ctx.json('news/markRead', { ids: [created.id] }, ann);

    const second = JSON.parse((await parley(ctx, ['news', 'post', '--title', 'Second', '--body', 'b', '--json'])).out);
    const listed = await parley(ctx, ['news', 'list', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([
      { ...second, readCount: 0 },
      { ...created, readCount: 1 },
    ]);
    const human = await parley(ctx, ['news', 'list']);
    expect(human.out).toContain(`${created.id}  ${created.createdAt}  read by 1  Maintenance tonight`);

    const deleted = await parley(ctx, ['news', 'delete', created.id, '--json']);
    expect({ code: deleted.code, out: JSON.parse(deleted.out) }).toEqual({ code: 0, out: { deleted: true, id: created.id } });
    expect((await ctx.json('news/list', {}, ann)).body.posts.map((p: any) => p.id)).toEqual([second.id]);
    expect(await ctx.count('news_reads')).toBe(0);
  });

  test('refusals exit 2 with one line and write nothing', async () => {
    const { ctx } = await setup();
    const refused = async (args: string[], says: string, env: Record<string, string> = {}) => {
      const r = await parley(ctx, args, env);
      expect({ args, code: r.code, out: r.out, lines: r.err.trim().split('\n').length, says: r.err.includes(says) }).toEqual({ args, code: 2, out: '', lines: 1, says: true });
    };
    await refused(['news', 'post', '--title', '   ', '--body', 'b'], '--title');
    await refused(['news', 'post', '--title', 'two\nlines', '--body', 'b'], '--title');
    await refused(['news', 'post', '--title', 'x'.repeat(201), '--body', 'b'], '--title');
    await refused(['news', 'post', '--title', 't', '--body', ' \n '], '--body');
    await refused(['news', 'post', '--title', 't', '--body', 'x'.repeat(11)], 'PARLEY_NEWS_BODY_MAX_CHARS', { PARLEY_NEWS_BODY_MAX_CHARS: '10' });
    await refused(['news', 'delete', '01a21743-d5f2-76a5-a6a1-2998a030531c'], 'no news post');
    expect(await ctx.count('news_posts')).toBe(0);
    // The limit is the setting's: exactly at it is fine.
    expect((await parley(ctx, ['news', 'post', '--title', 't', '--body', 'x'.repeat(10)], { PARLEY_NEWS_BODY_MAX_CHARS: '10' })).code).toBe(0);
    const missing = await parley(ctx, ['news', 'post', '--title', 't']);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain('--body');
  });
});
