import { beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { dirname, join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createTestContext, onPg, type TestContext, type TestUser } from './helpers';
import { sharedFakeExpo } from './fakes/expo';
import { listPushTokens, registerPushToken } from '../src/notifications/push-token.store';

// CLI processes: shared machines can be slow, and nothing here asserts on time.
setDefaultTimeout(60_000);

const fake = sharedFakeExpo();
beforeEach(() => fake.reset());

const TOKEN = 'ExponentPushToken[ok-support]';

/** Ann has a phone registered with her live session; Bob has none. The database outlives the context's connection. */
async function setup() {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], durable: true });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  await ctx.store.write((tx) => registerPushToken(tx, ann.user.id, TOKEN, 'ios', Date.now(), { sessionId: ann.sessionId }));
  return { ctx, ann, bob };
}

/**
 * Run the CLI from source against the context's database (its SQLite file, or its PostgreSQL
 * database). Async: the fake push service lives in this process and must keep answering. Push
 * goes to the fake unless a test says otherwise, never to Expo's real service.
 */
async function parley(ctx: TestContext, args: string[], env: Record<string, string> = {}) {
  const where = onPg ? { PARLEY_DATABASE_URL: ctx.deps.config.databaseUrl! } : { PARLEY_DATA_DIR: dirname(ctx.db.$client.filename) };
  const p = Bun.spawn([process.execPath, join(import.meta.dir, '../cli/main.ts'), ...args], {
    env: { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-support-cli-')), PARLEY_EXPO_BASE_URL: fake.url, ...where, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

const json = async (ctx: TestContext, args: string[], env: Record<string, string> = {}) => {
  const r = await parley(ctx, [...args, '--json'], env);
  expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: '' });
  return JSON.parse(r.out);
};

describe('parley support', () => {
  test('list and show with --json: every user, the user\'s e-mail, what admins have not read; show marks it read', async () => {
    const { ctx, ann, bob } = await setup();
    const a = (await ctx.json('support/createThread', { subject: 'Cannot sign in', message: 'The mail never came' }, ann)).body.thread;
    await ctx.json('support/sendMessage', { threadId: a.id, message: 'Still nothing' }, ann);
    const b = (await ctx.json('support/createThread', { subject: 'Billing', message: 'Invoice 42' }, bob)).body.thread;
    await ctx.json('support/closeThread', { threadId: b.id }, bob);

    // Default: open threads only.
    const open = await json(ctx, ['support', 'list']);
    expect(open).toEqual([expect.objectContaining({ id: a.id, subject: 'Cannot sign in', status: 'open', userId: ann.user.id, userEmail: 'ann@example.org', unreadCount: 2 })]);
    const all = await json(ctx, ['support', 'list', '--status', 'all']);
    expect(all.map((th: any) => [th.userEmail, th.status, th.unreadCount])).toEqual([
      ['bob@example.org', 'closed', 1],
      ['ann@example.org', 'open', 2],
    ]);
    expect((await json(ctx, ['support', 'list', '--status', 'closed'])).map((th: any) => th.id)).toEqual([b.id]);
    const human = await parley(ctx, ['support', 'list']);
    expect(human.code).toBe(0);
    expect(human.out).toContain(`${a.id}  open`);
    expect(human.out).toContain('ann@example.org  "Cannot sign in"  2 unread');

    const shown = await json(ctx, ['support', 'show', a.id]);
    expect(shown.thread).toMatchObject({ id: a.id, userEmail: 'ann@example.org', unreadCount: 0 });
    expect(shown.messages.map((m: any) => [m.author, m.body, typeof m.readByAdminAt])).toEqual([
      ['user', 'The mail never came', 'string'],
      ['user', 'Still nothing', 'string'],
    ]);
    expect(Object.keys(shown.messages[0])).toContain('adminEmail');
    expect((await json(ctx, ['support', 'list']))[0].unreadCount).toBe(0);
    // The user sees that the admins read it.
    const seen = (await ctx.json('support/getThread', { threadId: a.id }, ann)).body.messages;
    expect(seen.every((m: any) => m.readByAdminAt !== null)).toBe(true);
    const humanShow = await parley(ctx, ['support', 'show', a.id]);
    expect(humanShow.out).toContain('"Cannot sign in" (open) from ann@example.org');
    expect(humanShow.out).toContain('ann@example.org:\n  Still nothing');
  });

  test('reply: stored, the user sees it unread, and their phone gets a push that opens the thread', async () => {
    const { ctx, ann } = await setup();
    const a = (await ctx.json('support/createThread', { subject: 'Cannot sign in', message: 'Help' }, ann)).body.thread;
    const replied = await json(ctx, ['support', 'reply', a.id, '--message', 'Check your spam folder.', '--name', 'Sam', '--admin-email', 'sam@admins.example']);
    expect(replied.thread).toMatchObject({ id: a.id, status: 'open', userEmail: 'ann@example.org' });
    expect(replied.message).toMatchObject({ threadId: a.id, author: 'admin', adminName: 'Sam', adminEmail: 'sam@admins.example', body: 'Check your spam folder.' });
    expect(replied.push).toEqual({ status: 'sent', error: null, report: expect.objectContaining({ tokenCount: 1, sent: 1, errors: 0 }) });

    // What the fake Expo service received: to Ann's phone, carrying what opens the thread.
    expect(fake.requests.map((r) => r.path)).toEqual(['/--/api/v2/push/send']);
    expect(fake.delivered).toEqual([
      expect.objectContaining({ to: TOKEN, title: 'New reply from support', body: 'Cannot sign in', data: { type: 'support.reply', threadId: a.id, messageId: replied.message.id } }),
    ]);

    const listed = (await ctx.json('support/listThreads', {}, ann)).body.threads;
    expect(listed).toEqual([expect.objectContaining({ id: a.id, unreadCount: 1 })]);
    const got = (await ctx.json('support/getThread', { threadId: a.id }, ann)).body.messages;
    expect(got.at(-1)).toMatchObject({ id: replied.message.id, author: 'admin', adminName: 'Sam' });
    expect(JSON.stringify(got)).not.toContain('sam@admins.example');

    // --close: the answer is the last word and the thread is closed.
    fake.reset();
    const closing = await parley(ctx, ['support', 'reply', a.id, '--message', 'Solved, closing.', '--close']);
    expect(closing.code).toBe(0);
    expect(closing.out).toContain(`replied to ${a.id} (ann@example.org); the thread is closed`);
    expect(closing.out).toContain('push sent: 1 of 1 devices');
    expect((await ctx.json('support/listThreads', {}, ann)).body.threads[0]).toMatchObject({ status: 'closed', unreadCount: 1 });
    expect(fake.delivered).toHaveLength(1);
  });

  test('a push that cannot go out does not fail the reply; with push off none is tried', async () => {
    const { ctx, ann, bob } = await setup();
    const a = (await ctx.json('support/createThread', { subject: 'S', message: 'Help' }, ann)).body.thread;
    const unreachable = await json(ctx, ['support', 'reply', a.id, '--message', 'one'], { PARLEY_EXPO_BASE_URL: 'http://127.0.0.1:9' });
    expect(unreachable.push).toMatchObject({ status: 'failed', report: { tokenCount: 1, sent: 0, errors: 1 }, error: expect.stringContaining('push request failed: ') });
    const human = await parley(ctx, ['support', 'reply', a.id, '--message', 'two'], { PARLEY_EXPO_BASE_URL: 'http://127.0.0.1:9' });
    expect(human.code).toBe(0);
    expect(human.out).toContain('push failed: 0 of 1 devices, 1 errors');

    const off = await json(ctx, ['support', 'reply', a.id, '--message', 'three'], { PARLEY_PUSH_ENABLED: 'false' });
    expect(off.push).toEqual({ status: 'disabled', report: null, error: null });
    // Bob has no device.
    const b = (await ctx.json('support/createThread', { subject: 'B', message: 'Help' }, bob)).body.thread;
    expect((await json(ctx, ['support', 'reply', b.id, '--message', 'hi'])).push).toMatchObject({ status: 'no_devices', report: { tokenCount: 0 } });
    // A device Expo no longer knows: removed, and no device is left.
    await ctx.store.write((tx) => registerPushToken(tx, bob.user.id, 'ExponentPushToken[gone-support]', 'android', Date.now(), { sessionId: bob.sessionId }));
    expect((await json(ctx, ['support', 'reply', b.id, '--message', 'again'])).push).toMatchObject({ status: 'no_devices', report: { tokenCount: 1, invalidTokens: 1, sent: 0 } });
    expect(await ctx.store.read((tx) => listPushTokens(tx, bob.user.id))).toEqual([]);
    expect(fake.delivered).toEqual([]);
    // Every answer is stored.
    expect((await ctx.json('support/getThread', { threadId: a.id }, ann)).body.messages.map((m: any) => m.body)).toEqual(['Help', 'one', 'two', 'three']);
  });

  test('refusals exit 1 with one clear line and write nothing', async () => {
    const { ctx, ann } = await setup();
    const a = (await ctx.json('support/createThread', { subject: 'S', message: 'Help' }, ann)).body.thread;
    const refused = async (args: string[], says: string, env: Record<string, string> = {}) => {
      const r = await parley(ctx, args, env);
      // Commander's own errors about flags are followed by the command's help.
      const [first] = r.err.split('\n');
      expect({ args, code: r.code, out: r.out, says: first!.includes(says) }).toEqual({ args, code: 1, out: '', says: true });
      return r.err.trim().split('\n').length;
    };
    const unknown = '01a21743-d5f2-76a5-a6a1-2998a030531c';
    await refused(['support', 'show', unknown], `no support thread ${unknown}`);
    await refused(['support', 'reply', unknown, '--message', 'hi'], `no support thread ${unknown}`);
    await refused(['support', 'reply', a.id, '--message', '   '], '--message: The message is empty');
    await refused(['support', 'reply', a.id, '--message', 'x'.repeat(11)], '--message: The message is longer than 10 characters', { PARLEY_SUPPORT_MESSAGE_MAX_CHARS: '10' });
    await refused(['support', 'reply', a.id], "required option '--message <text>'");
    await refused(['support', 'list', '--status', 'pending'], 'Allowed choices are open, closed, all');
    await refused(['support', 'list', '--limit', '0'], '--limit must be a positive integer');
    await refused(['support', 'show'], "missing required argument 'threadId'");
    expect(await ctx.count('support_messages')).toBe(1);
    expect(fake.requests).toEqual([]);
  });
});
