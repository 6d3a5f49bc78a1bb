import { afterAll, describe, expect, test } from 'bun:test';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { SseReader, readFrames } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import { createConversation } from '../src/chat/conversation.store';

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

const users = [{ email: 'ann@example.org' }, { email: 'bob@example.org' }];
// No search provider: research writes its report from the model alone (docs/research.md).
const config = { aiProvider: 'openai-chat' as const, aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small' };
const turn = (ctx: TestContext, op: string, body: unknown, as: TestUser) => ctx.call(op, body, { 'x-api-key': as.key });
const list = async (ctx: TestContext, body: unknown, as: TestUser) => {
  const res = await ctx.json('chat/listConversations', body, as);
  expect(res.status).toBe(200);
  return res.body.conversations as { id: string; title: string; lastResponse: { id: string; kind: string; status: string } | null }[];
};

describe('which conversations are research runs, and whether their last turn still runs', () => {
  test('chat/listConversations: `lastResponse` on every conversation, `kind: research` keeps the research runs; getConversation says the same', async () => {
    const ctx = await createTestContext({ users, config });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    openai.eventDelayMs = 0;
    openai.chatScript = () => ({ deltas: [{ content: 'Report.' }] });
    const chat = await readFrames(await turn(ctx, 'chat/stream', { message: 'Hello' }, ann));
    const chatId = chat[0]!.data.conversationId as string;
    const finished = await readFrames(await turn(ctx, 'chat/streamDeepResearch', { message: 'Why tides?' }, ann));
    const finishedId = finished[0]!.data.conversationId as string;
    const finishedResponse = finished[1]!.data.responseId as string;
    expect(finished.at(-1)!.data.type).toBe('done');
    const empty = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Nothing asked yet' }));

    // A research run still going: the model answers slowly.
    openai.eventDelayMs = 300;
    openai.chatScript = () => ({ deltas: [{ content: 'Slow ' }, { content: 'report.' }], pauseMs: 1500 });
    const running = new SseReader(await turn(ctx, 'chat/streamDeepResearch', { message: 'Why storms?' }, ann));
    const runningId = (await running.next())!.data.conversationId as string;
    const runningResponse = (await running.next())!.data.responseId as string;

    const all = await list(ctx, {}, ann);
    const byId = new Map(all.map((c) => [c.id, c.lastResponse]));
    expect(byId.get(empty.id)).toBeNull();
    expect(byId.get(chatId)).toMatchObject({ kind: 'chat', status: 'completed' });
    expect(byId.get(finishedId)).toEqual({ id: finishedResponse, kind: 'research', status: 'completed' });
    expect(byId.get(runningId)).toEqual({ id: runningResponse, kind: 'research', status: expect.stringMatching(/^(queued|in_progress)$/) });

    const researchOnly = await list(ctx, { kind: 'research' }, ann);
    expect(researchOnly.map((c) => c.id)).toEqual([runningId, finishedId]);
    expect((await list(ctx, { kind: 'chat' }, ann)).map((c) => c.id)).toEqual([chatId]);
    // Pages of research runs keep to the filter too.
    const first = await ctx.json('chat/listConversations', { kind: 'research', limit: 1 }, ann);
    const second = await ctx.json('chat/listConversations', { kind: 'research', limit: 1, cursor: first.body.nextCursor }, ann);
    expect([...first.body.conversations, ...second.body.conversations].map((c: { id: string }) => c.id)).toEqual([runningId, finishedId]);
    expect(second.body.nextCursor).toBeNull();

    const got = await ctx.json('chat/getConversation', { conversationId: runningId }, ann);
    expect(got.body.conversation.lastResponse).toMatchObject({ id: runningResponse, kind: 'research' });
    expect((await ctx.json('chat/getConversation', { conversationId: empty.id }, ann)).body.conversation.lastResponse).toBeNull();

    // Someone else sees none of Ann's runs.
    expect(await list(ctx, { kind: 'research' }, bob)).toEqual([]);
    expect((await ctx.json('chat/listConversations', { kind: 'poems' }, ann)).status).toBe(400);

    // Once it ends, the list says so.
    const rest = await running.all();
    expect(rest.at(-1)!.data.type).toBe('done');
    expect((await list(ctx, { kind: 'research' }, ann)).find((c) => c.id === runningId)!.lastResponse).toEqual({ id: runningResponse, kind: 'research', status: 'completed' });
  }, 30_000);

  test('a second turn in the conversation becomes its `lastResponse`', async () => {
    const ctx = await createTestContext({ users, config });
    const [ann] = ctx.users as [TestUser];
    openai.eventDelayMs = 0;
    openai.chatScript = () => ({ deltas: [{ content: 'Answer.' }] });
    const first = await readFrames(await turn(ctx, 'chat/streamDeepResearch', { message: 'One' }, ann));
    const conversationId = first[0]!.data.conversationId as string;
    const second = await readFrames(await turn(ctx, 'chat/stream', { message: 'Two', conversationId }, ann));
    const got = await ctx.json('chat/getConversation', { conversationId }, ann);
    expect(got.body.conversation.lastResponse).toEqual({ id: second[0]!.data.responseId, kind: 'chat', status: 'completed' });
    // Still a research run: it has one.
    expect((await list(ctx, { kind: 'research' }, ann)).map((c) => c.id)).toEqual([conversationId]);
  });
});

describe("group chats' conversations in the list", () => {
  test('each conversation names its group chat (`groupChatId`); `groups: false` leaves them out, pages included', async () => {
    const ctx = await createTestContext({ users, config });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const one = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Just me' }, 1_000));
    const group = (await ctx.json('groupChat/createGroupChat', { name: 'Family' }, ann)).body as { id: string; conversationId?: string };
    const two = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Me again' }));

    const all = await list(ctx, {}, ann);
    expect(all).toHaveLength(3);
    const grouped = all.filter((c) => (c as { groupChatId?: string | null }).groupChatId);
    expect(grouped.map((c) => (c as { groupChatId?: string }).groupChatId)).toEqual([group.id]);
    expect(all.filter((c) => (c as { groupChatId?: string | null }).groupChatId === null).map((c) => c.id).sort()).toEqual([one.id, two.id].sort());

    const chats = await list(ctx, { groups: false }, ann);
    expect(chats.map((c) => c.id)).toEqual([two.id, one.id]);
    const first = await ctx.json('chat/listConversations', { groups: false, limit: 1 }, ann);
    const second = await ctx.json('chat/listConversations', { groups: false, limit: 1, cursor: first.body.nextCursor }, ann);
    expect([...first.body.conversations, ...second.body.conversations].map((c: { id: string }) => c.id)).toEqual([two.id, one.id]);
    expect(second.body.nextCursor).toBeNull();

    const groupConversation = grouped[0]!.id;
    const got = await ctx.json('chat/getConversation', { conversationId: groupConversation }, ann);
    expect(got.body.conversation.groupChatId).toBe(group.id);
    expect((await ctx.json('chat/getConversation', { conversationId: one.id }, ann)).body.conversation.groupChatId).toBeNull();
    expect(await list(ctx, {}, bob)).toEqual([]);
  });
});
