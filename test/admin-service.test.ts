import { describe, expect, test } from 'bun:test';
import { updateUser } from '../src/account/account.store';
import { createTestContext, seedUser } from './helpers';

/**
 * The service's pages for admins through HTTP (news, support answers, mini apps): the admin/*
 * operations the web app's Admin page uses, over the stores and rules the CLI uses. Every one
 * refuses an ordinary user (the authorisation matrix, test/authz/, checks that too).
 */
async function setup() {
  const ctx = await createTestContext({ config: { pushEnabled: false } as never });
  const admin = await seedUser(ctx.store, { email: 'admin@example.org', name: 'Ada' }, ctx.deps.config);
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  const ann = await seedUser(ctx.store, { email: 'ann@example.org', name: 'Ann' }, ctx.deps.config);
  return { ctx, admin, ann };
}

describe('admin news', () => {
  test('post, list with reads, users see it unread, delete; a blank title is refused in words', async () => {
    const { ctx, admin, ann } = await setup();
    const posted = await ctx.json('admin/postNews', { title: '  Maintenance tonight ', body: 'From **22:00**.' }, admin);
    expect(posted).toMatchObject({ status: 200, body: { title: 'Maintenance tonight', body: 'From **22:00**.', readCount: 0 } });
    expect((await ctx.json('news/list', {}, ann)).body).toMatchObject({ unreadCount: 1, posts: [{ id: posted.body.id, read: false }] });
    await ctx.json('news/markRead', { all: true }, ann);
    expect((await ctx.json('admin/listNews', {}, admin)).body.posts).toEqual([{ ...posted.body, readCount: 1 }]);
    const blank = await ctx.json('admin/postNews', { title: '  ', body: 'x' }, admin);
    expect(blank.status).toBe(400);
    expect(blank.body.message).toMatch(/title/);
    expect(await ctx.json('admin/deleteNews', { id: posted.body.id }, admin)).toMatchObject({ status: 200, body: { success: true } });
    expect(await ctx.json('admin/deleteNews', { id: posted.body.id }, admin)).toMatchObject({ status: 404 });
    expect((await ctx.json('news/list', {}, ann)).body.posts).toEqual([]);
    expect(await ctx.json('admin/postNews', { title: 'x', body: 'y' }, ann)).toMatchObject({ status: 403 });
  });
});

describe('admin support', () => {
  test("list what is unread, read a thread (marks it read for the admins), answer it: the user sees the answer with the admin's name, never their e-mail", async () => {
    const { ctx, admin, ann } = await setup();
    const opened = await ctx.json('support/createThread', { subject: 'Cannot upload', message: 'My PDF is refused.' }, ann);
    const threadId = opened.body.thread.id;
    const list = await ctx.json('admin/listSupportThreads', {}, admin);
    expect(list.body.threads).toMatchObject([{ id: threadId, subject: 'Cannot upload', userEmail: 'ann@example.org', unreadCount: 1 }]);
    const shown = await ctx.json('admin/getSupportThread', { threadId }, admin);
    expect(shown.body.messages.map((m: any) => [m.author, m.body])).toEqual([['user', 'My PDF is refused.']]);
    expect((await ctx.json('admin/listSupportThreads', {}, admin)).body.threads[0].unreadCount).toBe(0);
    const reply = await ctx.json('admin/replySupport', { threadId, message: 'Try a smaller one.', name: 'Ada' }, admin);
    expect(reply).toMatchObject({ status: 200, body: { message: { author: 'admin', adminName: 'Ada', adminEmail: 'admin@example.org' }, push: { status: 'disabled' } } });
    const seen = await ctx.json('support/getThread', { threadId }, ann);
    expect(seen.body.messages.at(-1)).toMatchObject({ author: 'admin', adminName: 'Ada', body: 'Try a smaller one.' });
    expect(JSON.stringify(seen.body)).not.toContain('admin@example.org');
    // Closing with the answer; the closed list has it.
    await ctx.json('admin/replySupport', { threadId, message: 'Closing.', close: true }, admin);
    expect((await ctx.json('admin/listSupportThreads', { status: 'closed' }, admin)).body.threads.map((t: any) => t.id)).toEqual([threadId]);
    expect(await ctx.json('admin/replySupport', { threadId: 'nope', message: 'x' }, admin)).toMatchObject({ status: 404 });
    expect(await ctx.json('admin/getSupportThread', { threadId: 'nope' }, admin)).toMatchObject({ status: 404 });
  });
});

describe('admin mini apps', () => {
  test('add, list in order, change, refuse a taken name and a plain-http address, remove; users see the catalogue', async () => {
    const { ctx, admin, ann } = await setup();
    const calc = await ctx.json('admin/addMiniApp', { name: 'Calculator', url: 'https://calc.example.org', description: 'Sums' }, admin);
    expect(calc).toMatchObject({ status: 200, body: { name: 'Calculator', url: 'https://calc.example.org/', iconUrl: null } });
    await ctx.json('admin/addMiniApp', { name: 'Atlas', url: 'https://atlas.example.org/', position: 5 }, admin);
    expect((await ctx.json('admin/listMiniApps', {}, admin)).body.apps.map((a: any) => a.name)).toEqual(['Calculator', 'Atlas']);
    expect(await ctx.json('admin/addMiniApp', { name: 'CALCULATOR', url: 'https://x.example.org/' }, admin)).toMatchObject({ status: 409 });
    const http = await ctx.json('admin/addMiniApp', { name: 'Plain', url: 'http://plain.example.org/' }, admin);
    expect(http.status).toBe(400);
    expect(http.body.message).toMatch(/^url must be an https URL/);
    const moved = await ctx.json('admin/updateMiniApp', { id: calc.body.id, position: 9, description: null }, admin);
    expect(moved.body).toMatchObject({ position: 9, description: null, name: 'Calculator' });
    expect((await ctx.json('miniApps/list', {}, ann)).body.apps.map((a: any) => a.name)).toEqual(['Atlas', 'Calculator']);
    expect(await ctx.json('admin/updateMiniApp', { id: 'none', name: 'X' }, admin)).toMatchObject({ status: 404 });
    expect(await ctx.json('admin/removeMiniApp', { id: calc.body.id }, admin)).toMatchObject({ status: 200, body: { success: true } });
    expect(await ctx.json('admin/removeMiniApp', { id: calc.body.id }, admin)).toMatchObject({ status: 404 });
    expect(await ctx.json('admin/listMiniApps', {}, ann)).toMatchObject({ status: 403 });
  });
});
