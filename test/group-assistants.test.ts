import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { captureLog, createTestContext, until, type TestContext, type TestUser } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import { modelList, startFakeOpenAI } from './fakes/openai';
import { updateUser } from '../src/account/account.store';
import { firstMention } from '../src/groups/group-answerer';
import { listUsageRecords } from '../src/usage/usage.store';
import type { Config } from '../src/config';

// Assistants in a group (docs/groups.md, "Assistants in a group"): the group's assistant for @ai,
// and shared assistants mentioned by name. The fake model answers with the name its system prompt gives it.
// Each test waits for several answers; on PostgreSQL under a loaded machine that passes five seconds.
setDefaultTimeout(30_000);
const ai = startFakeOpenAI();
afterAll(() => ai.stop());
ai.gets['/v1/models'] = modelList(['small', 'big']);
ai.chatScript = (body) => {
  const system: string = body.messages[0].content;
  return { deltas: [{ content: `${/^You are @([^,]+),/.exec(system)?.[1]} answers.` }] };
};
const chats = () => ai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);

async function world(extra: Parameters<typeof createTestContext>[0] = {}) {
  const ctx = await createTestContext({
    users: [{ email: 'admin@example.org', name: 'Admin' }, { email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: ai.url, aiModel: 'small' } satisfies Partial<Config>,
    ...extra,
  });
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  const shared = async (body: Record<string, unknown>) => {
    const res = await ctx.json('assistants/create', { shared: true, ...body }, admin);
    expect(res.status).toBe(200);
    return res.body.assistant;
  };
  const group = await groupWith(ctx, ann, [bob]);
  return { ctx, admin, ann, bob, group, shared };
}

const setAssistant = (ctx: TestContext, u: TestUser, groupChatId: string, assistantId: string | null) => ctx.json('groupChat/setAssistant', { groupChatId, assistantId }, u);

/** The group's messages after `after` (its id), once `count` of them are there. */
async function messagesAfter(ctx: TestContext, u: TestUser, groupChatId: string, after: string, count: number) {
  let found: any[] = [];
  await until(async () => {
    const { messages } = (await ctx.json('groupChat/listMessages', { groupChatId }, u)).body;
    found = messages.slice(messages.findIndex((m: any) => m.id === after) + 1);
    return found.length >= count;
  }, `${count} messages after the question`);
  return found;
}

async function answerTo(ctx: TestContext, u: TestUser, groupChatId: string, text: string) {
  const q = await send(ctx, u, groupChatId, text);
  return (await messagesAfter(ctx, u, groupChatId, q.id, 1))[0];
}

describe('mentions in the text', () => {
  test('the first mention decides; the longest name wins at one @; any case; never inside a word or an address', () => {
    const names = [{ name: 'ai' }, { name: 'Travel' }, { name: 'Travel Planner' }, { name: 'Chef' }];
    const hit = (text: string) => firstMention(text, names)?.name;
    expect(hit('@travel planner, a weekend in Rome?')).toBe('Travel Planner');
    expect(hit('@TRAVEL, a weekend?')).toBe('Travel');
    expect(hit('ask @chef then @ai')).toBe('Chef');
    expect(hit('(@Chef) dinner?')).toBe('Chef');
    expect(hit('@chefs are busy')).toBeUndefined();
    expect(hit('@chef-bot')).toBeUndefined();
    expect(hit('write to ann@chef.org')).toBeUndefined();
    expect(hit('@Ann and @Bob, dinner?')).toBeUndefined();
    expect(hit('@ travel')).toBeUndefined();
    // The handle is one of the names (the first given wins a tie): a longer name beginning like it still wins.
    expect(firstMention('@ai helper, hi', [{ name: 'ai' }, { name: 'AI' }, { name: 'AI helper' }])?.name).toBe('AI helper');
    expect(firstMention('@AI, hi', [{ name: 'ai' }, { name: 'AI' }])?.name).toBe('ai');
  });
});

describe('groupChat/setAssistant', () => {
  test('the creator picks a shared assistant: returned with the group, told to members, and @ai answers with its instructions and model, signed with its name; null gives Parley\'s own back', async () => {
    const { ctx, ann, bob, group, shared } = await world();
    expect(group.assistantId).toBeNull();
    const chef = await shared({ name: 'Chef', instructions: 'Answer with a recipe.', model: 'env-ai/big' });
    const stream = await subscribe(ctx, bob, group.id);

    const set = await setAssistant(ctx, ann, group.id, chef.id);
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: group.id, assistantId: chef.id, model: null });
    expect((await stream.nextData(5000)).data).toEqual({ type: 'group.updated', groupChat: set.body });
    expect((await ctx.json('groupChat/listGroupChats', {}, bob)).body.groupChats[0].assistantId).toBe(chef.id);

    const q = await send(ctx, bob, group.id, '@ai dinner tonight?');
    const events: any[] = [];
    for (;;) {
      const f = await stream.nextData(5000);
      events.push(f.data);
      if (f.data.type === 'message.created' && f.data.message.role === 'assistant') break;
    }
    expect(events.find((e) => e.type === 'assistant.started')).toEqual({ type: 'assistant.started', replyTo: q.id, assistantId: chef.id, name: 'Chef' });
    const live = events.at(-1).message;
    expect(live).toMatchObject({ role: 'assistant', content: 'Chef answers.', sender: { id: 'assistant', name: 'Chef', image: '' }, assistantId: chef.id });
    const [stored] = await messagesAfter(ctx, bob, group.id, q.id, 1);
    expect(stored).toEqual(live);
    const sent = chats().at(-1);
    expect(sent.model).toBe('big');
    expect(sent.messages[0].content).toContain('Your instructions:\nAnswer with a recipe.');
    // Bob asked, Bob pays; the usage row names the assistant that answered (docs/usage.md).
    const groupUsage = async () => (await ctx.store.read((tx) => listUsageRecords(tx, bob.user.id, { limit: 10 }))).filter((r) => r.kind === 'group');
    await until(async () => (await groupUsage()).length === 1, 'the answer recorded');
    expect((await groupUsage())[0]!.assistantId).toBe(chef.id);

    expect((await setAssistant(ctx, ann, group.id, null)).body.assistantId).toBeNull();
    const own = await answerTo(ctx, bob, group.id, '@ai and now?');
    expect(own).toMatchObject({ content: 'ai answers.', sender: { id: 'assistant', name: 'ai' } });
    expect(own.assistantId).toBeUndefined();
    expect(chats().at(-1).model).toBe('small');
  });

  test('only the creator picks; an unknown assistant, one not shared with them, or their own is a 400 saying which, and nothing changes', async () => {
    const { ctx, admin, ann, bob, group, shared } = await world();
    const chef = await shared({ name: 'Chef' });
    expect((await setAssistant(ctx, bob, group.id, chef.id)).status).toBe(403);
    expect((await setAssistant(ctx, ann, 'nope', chef.id)).status).toBe(404);
    expect((await setAssistant(ctx, ann, group.id, 'nope')).body).toMatchObject({ message: 'Unknown assistant "nope": assistants/list lists the ones you may use.' });

    const pro = await shared({ name: 'Pro helper', visibility: 'tiers', tiers: ['PRO'] });
    expect((await setAssistant(ctx, ann, group.id, pro.id)).status).toBe(400);
    const mine = (await ctx.json('assistants/create', { name: 'Mine' }, ann)).body.assistant;
    expect((await setAssistant(ctx, ann, group.id, mine.id)).body).toMatchObject({ message: '"Mine" is your own assistant: only an assistant an administrator shared can answer in a group.' });
    // Someone else's own assistant is as unknown as one that does not exist.
    const adminsOwn = (await ctx.json('assistants/create', { name: 'Admin only' }, admin)).body.assistant;
    expect((await setAssistant(ctx, ann, group.id, adminsOwn.id)).status).toBe(400);
    expect((await ctx.json('groupChat/listGroupChats', {}, ann)).body.groupChats[0].assistantId).toBeNull();
  });

  test("deleted, the group goes back to Parley's own; no longer shared with the creator, Parley's own answers and the log says why", async () => {
    const { log, lines } = captureLog();
    const { ctx, admin, ann, bob, group, shared } = await world({ log });
    const chef = await shared({ name: 'Chef' });
    await setAssistant(ctx, ann, group.id, chef.id);
    expect((await answerTo(ctx, bob, group.id, '@ai hi')).sender.name).toBe('Chef');

    await ctx.json('assistants/update', { assistantId: chef.id, visibility: 'tiers', tiers: ['PRO'] }, admin);
    expect((await answerTo(ctx, bob, group.id, '@ai still you?')).sender.name).toBe('ai');
    expect(lines.find((l) => l.includes("the group's assistant is no longer shared with its creator"))).toContain(chef.id);
    expect((await ctx.json('groupChat/listGroupChats', {}, ann)).body.groupChats[0].assistantId).toBe(chef.id);
    // The answer it wrote before keeps its name.
    const { messages } = (await ctx.json('groupChat/listMessages', { groupChatId: group.id }, bob)).body;
    expect(messages.filter((m: any) => m.role === 'assistant').map((m: any) => m.sender.name)).toEqual(['Chef', 'ai']);

    expect((await ctx.json('assistants/delete', { assistantId: chef.id }, admin)).status).toBe(200);
    expect((await ctx.json('groupChat/listGroupChats', {}, ann)).body.groupChats[0].assistantId).toBeNull();
    expect((await answerTo(ctx, bob, group.id, '@ai and now?')).sender.name).toBe('ai');
    const after = (await ctx.json('groupChat/listMessages', { groupChatId: group.id }, bob)).body.messages;
    expect(after.find((m: any) => m.assistantId === chef.id)).toMatchObject({ sender: { name: 'Chef' } });
  });
});

describe('members of other tiers', () => {
  test("the group's assistant answers a member it is not shared with; that member cannot call it by name", async () => {
    const { ctx, ann, bob, group, shared } = await world();
    const pro = await shared({ name: 'Pro helper', visibility: 'tiers', tiers: ['PRO'] });
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    expect((await setAssistant(ctx, ann, group.id, pro.id)).body.assistantId).toBe(pro.id);
    // Bob is FREE: his @ai gets the group's choice.
    expect(await answerTo(ctx, bob, group.id, '@ai hello?')).toMatchObject({ sender: { name: 'Pro helper' }, assistantId: pro.id });
    expect((await ctx.json('assistants/get', { assistantId: pro.id }, bob)).status).toBe(404);
    const asked = chats().length;
    const q = await send(ctx, bob, group.id, '@Pro helper hello?');
    const after = await send(ctx, bob, group.id, '@ai and you?');
    const [next, answer] = await messagesAfter(ctx, bob, group.id, q.id, 2);
    expect(next.id).toBe(after.id);
    expect(answer.role).toBe('assistant');
    // The mention, started first, would have asked the model first: one call, the @ai answer's.
    expect(chats().length).toBe(asked + 1);
  });
});

describe('mentioning a shared assistant', () => {
  test('it answers as @ai does, with its tools and under its name; the longest name wins', async () => {
    const { ctx, ann, bob, group, shared } = await world();
    await shared({ name: 'Travel', instructions: 'Short trips.' });
    const planner = await shared({ name: 'Travel Planner', instructions: 'Plan every day.', tools: [] });
    const answer = await answerTo(ctx, bob, group.id, '@travel planner a weekend in Rome?');
    expect(answer).toMatchObject({ content: 'Travel Planner answers.', sender: { id: 'assistant', name: 'Travel Planner' }, assistantId: planner.id });
    const sent = chats().at(-1);
    expect(sent.messages[0].content).toContain('Plan every day.');
    // Its tools are none: not even the group's web search.
    expect(sent.tools ?? []).toEqual([]);
    // @ai beside it: the first mention answers, once.
    const q = await send(ctx, ann, group.id, '@Travel or @ai, which train?');
    const [first] = await messagesAfter(ctx, ann, group.id, q.id, 1);
    expect(first.sender.name).toBe('Travel');
    // Travel Planner's answer reached Travel as a line under its name, not as Travel's own turn.
    // (Consecutive user lines reach the server as one message.)
    const context = chats().at(-1).messages;
    expect(context.map((m: any) => m.role)).toEqual(['system', 'user']);
    expect(context[1].content).toContain('\n\n@Travel Planner (an assistant): Travel Planner answers.\n\n');
  });

  test('an unknown name, an assistant not shared with the sender, or answers switched off: no answer and no error', async () => {
    const { ctx, ann, bob, group, shared } = await world();
    await shared({ name: 'Pro helper', visibility: 'tiers', tiers: ['PRO'] });
    const stream = await subscribe(ctx, ann, group.id);
    const before = chats().length;
    const q1 = await send(ctx, bob, group.id, '@Carol are you coming?');
    const q2 = await send(ctx, bob, group.id, '@pro helper are you there?');
    // Bob's tier is FREE: the PRO assistant is a plain word to him, but Ann, made PRO, gets an answer.
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    const q3 = await send(ctx, ann, group.id, '@pro helper are you there?');
    const after = await messagesAfter(ctx, ann, group.id, q1.id, 3);
    expect(after.map((m: any) => m.id).slice(0, 2)).toEqual([q2.id, q3.id]);
    expect((await messagesAfter(ctx, ann, group.id, q3.id, 1))[0].sender.name).toBe('Pro helper');
    const started: any[] = [];
    for (;;) {
      const f = await stream.nextData(5000);
      if (f.data.type === 'assistant.started') started.push(f.data.replyTo);
      if (f.data.type === 'message.created' && f.data.message.role === 'assistant') break;
    }
    expect(started).toEqual([q3.id]);
    expect(chats().length).toBe(before + 1);

    await ctx.json('groupChat/setIntelligentResponses', { groupChatId: group.id, enabled: false }, ann);
    const q4 = await send(ctx, ann, group.id, '@pro helper again?');
    const q5 = await send(ctx, ann, group.id, 'last one');
    expect((await messagesAfter(ctx, ann, group.id, q4.id, 1))[0].id).toBe(q5.id);
    expect(chats().length).toBe(before + 1);
  });
});
