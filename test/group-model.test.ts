import { afterAll, describe, expect, test } from 'bun:test';
import { captureLog, createTestContext, until, type TestContext, type TestUser } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import { modelList, startFakeOpenAI, type FakeOpenAI } from './fakes/openai';
import { updateUser } from '../src/account/account.store';
import type { Config } from '../src/config';

// Two AI servers: the environment's (`env-ai`, model `small`) and one an admin adds (`second`, model `big`).
const local = startFakeOpenAI();
const second = startFakeOpenAI();
afterAll(() => (local.stop(), second.stop()));
local.gets['/v1/models'] = modelList(['small', 'large']);
second.gets['/v1/models'] = modelList(['big']);
local.chatScript = () => ({ deltas: [{ content: 'From the local server.' }] });
second.chatScript = () => ({ deltas: [{ content: 'From the second server.' }] });

const envChat: Partial<Config> = { aiProvider: 'openai-chat', aiBaseUrl: local.url, aiModel: 'small' };

async function world(extra: Parameters<typeof createTestContext>[0] = {}) {
  const ctx = await createTestContext({ users: [{ email: 'admin@example.org' }, { email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }], config: envChat, ...extra });
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  const added = await ctx.json('admin/addConnection', { name: 'second', kind: 'chat', baseUrl: second.url, options: { model: 'big' } }, admin);
  expect(added.status).toBe(200);
  const group = await groupWith(ctx, ann, [bob]);
  return { ctx, admin, ann, bob, group };
}

const setModel = (ctx: TestContext, u: TestUser, groupChatId: string, model: string | null) => ctx.json('groupChat/setModel', { groupChatId, model }, u);
const chatModels = (fake: FakeOpenAI) => fake.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body.model);

/** Ask the assistant and wait for its outcome in the group's history. */
async function ask(ctx: TestContext, u: TestUser, groupChatId: string, message: string): Promise<string> {
  await send(ctx, u, groupChatId, message);
  let answer = '';
  await until(async () => {
    const { messages } = (await ctx.json('groupChat/listMessages', { groupChatId }, u)).body;
    const last = messages.at(-1);
    answer = last?.role === 'assistant' ? last.content : '';
    return !!answer;
  }, 'the assistant to answer');
  return answer;
}

describe('groupChat/setModel', () => {
  test("the creator picks any listed model: returned with the group, told to members, and it answers @ai; null gives the admin's default back", async () => {
    const { ctx, ann, bob, group } = await world();
    expect(group.model).toBeNull();
    const stream = await subscribe(ctx, bob, group.id);

    const set = await setModel(ctx, ann, group.id, 'second/big');
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: group.id, model: 'second/big', intelligentResponses: true });
    const told = await stream.nextData(5000);
    expect(told.data).toEqual({ type: 'group.updated', groupChat: set.body });
    const listed = (await ctx.json('groupChat/listGroupChats', {}, bob)).body.groupChats;
    expect(listed[0]).toMatchObject({ id: group.id, model: 'second/big' });

    const before = { local: chatModels(local).length, second: chatModels(second).length };
    expect(await ask(ctx, bob, group.id, '@ai which server are you?')).toBe('From the second server.');
    expect(chatModels(second).slice(before.second)).toEqual(['big']);
    expect(chatModels(local).length).toBe(before.local);

    // Named by its plain upstream id, kept as its catalogue id.
    expect((await setModel(ctx, ann, group.id, 'large')).body.model).toBe('env-ai/large');
    // Switching intelligent responses keeps the model.
    expect((await ctx.json('groupChat/setIntelligentResponses', { groupChatId: group.id, enabled: true }, ann)).body.model).toBe('env-ai/large');

    const reset = await setModel(ctx, ann, group.id, null);
    expect(reset.body.model).toBeNull();
    expect(await ask(ctx, bob, group.id, '@ai and now?')).toBe('From the local server.');
    expect(chatModels(local).at(-1)).toBe('small');
  });

  test('only the creator sets it; an unknown, hidden or forbidden model is a 400 saying which, and nothing changes', async () => {
    const { ctx, admin, ann, bob, group } = await world();
    expect((await setModel(ctx, bob, group.id, 'second/big')).status).toBe(403);
    expect((await setModel(ctx, ann, 'nope', 'second/big')).status).toBe(404);

    const unknown = await setModel(ctx, ann, group.id, 'nowhere/model');
    expect(unknown).toMatchObject({ status: 400, body: { message: 'Unknown model "nowhere/model": chat/listModels lists the models of this server.' } });
    const notListed = await setModel(ctx, ann, group.id, 'second/huge');
    expect(notListed.body.message).toBe('Unknown model "second/huge": second does not list it.');

    await ctx.json('admin/setModelSettings', { id: 'second/big', hidden: true }, admin);
    expect((await setModel(ctx, ann, group.id, 'second/big')).body).toMatchObject({ message: 'The model "second/big" is not offered on this server.' });
    await ctx.json('admin/setModelSettings', { id: 'second/big', hidden: false, tiers: ['PRO'] }, admin);
    expect((await setModel(ctx, ann, group.id, 'second/big')).body).toMatchObject({ message: 'The model "second/big" is not included in your subscription (FREE).' });
    // A PRO creator may choose it.
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    expect((await setModel(ctx, ann, group.id, 'second/big')).body.model).toBe('second/big');

    await ctx.json('admin/updateConnection', { id: 'second', enabled: false }, admin);
    expect((await setModel(ctx, ann, group.id, 'second/big')).body.message).toBe('The model "second/big" is not available: its connection second is disabled.');
    const listed = (await ctx.json('groupChat/listGroupChats', {}, ann)).body.groupChats;
    expect(listed[0].model).toBe('second/big');
  });

  test("a chosen model that later goes gives way to the group default, and the log says why; a default that is gone fails as before", async () => {
    const { log, lines } = captureLog();
    const { ctx, admin, ann, bob, group } = await world({ log });
    await setModel(ctx, ann, group.id, 'second/big');
    await ctx.json('admin/removeConnection', { id: 'second' }, admin);
    expect(await ask(ctx, bob, group.id, '@ai still there?')).toBe('From the local server.');
    expect(lines.find((l) => l.includes("the group's model is gone, the group default answers"))).toContain('second/big');
    // The group keeps its choice: a connection added back under the same name answers again.
    expect((await ctx.json('groupChat/listGroupChats', {}, ann)).body.groupChats[0].model).toBe('second/big');
    await ctx.json('admin/addConnection', { name: 'second', kind: 'chat', baseUrl: second.url, options: { model: 'big' } }, admin);
    expect(await ask(ctx, bob, group.id, '@ai and now?')).toBe('From the second server.');

    // The group default itself gone (its only connection disabled): the failure is said as today.
    await ctx.json('admin/removeConnection', { id: 'second' }, admin);
    await ctx.json('admin/updateConnection', { id: 'env-ai', enabled: false }, admin);
    const stream = await subscribe(ctx, bob, group.id);
    await send(ctx, bob, group.id, '@ai hello?');
    for (;;) {
      const f = await stream.nextData(5000);
      if (f.data.type !== 'assistant.failed') continue;
      expect(f.data).toMatchObject({ reason: 'no_provider', message: 'No AI provider is configured on this server.' });
      break;
    }
  });
});
