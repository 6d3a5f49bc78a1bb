/**
 * Assistants (docs/assistants.md): a user's own and those admins share with everyone or with
 * tiers; `assistants/*`; `chat/stream` with `assistantId` answers with its instructions, model and
 * tools, the conversation keeps it (chat/listConversations says which), and goes on with Parley
 * itself once it is deleted. Through HTTP with the fake OpenAI server, on both stores.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, shareWith, until, type TestContext, type TestUser } from './helpers';
import { listUsageRecords } from '../src/usage/usage.store';
import { readFrames, typesOf } from './sse';
import { updateUser } from '../src/account/account.store';
import { assistantsContext } from './support/assistant-users';
import { fakeAiForFile } from './support/fake-ai-for-file';

setDefaultTimeout(30_000);

const fakes = fakeAiForFile();
const { openai } = fakes;
const setup = () => assistantsContext(fakes);

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name);
const systemOf = (body: any): string => body.messages[0].content;
const create = (ctx: TestContext, as: TestUser, body: Record<string, unknown>) => ctx.json('assistants/create', body, as);

describe('assistants', () => {
  test("a user's own: create, list, get, update, delete; nobody else sees it", async () => {
    const { ctx, ann, bob } = await setup();
    const made = await create(ctx, ann, { name: ' Tea sommelier ', description: 'Knows tea.', instructions: 'Always recommend a tea.', starters: ['Which tea for breakfast?'] });
    expect(made.status).toBe(200);
    const a = made.body.assistant;
    expect(a).toMatchObject({ name: 'Tea sommelier', description: 'Knows tea.', instructions: 'Always recommend a tea.', model: null, tools: null, starters: ['Which tea for breakfast?'], shared: false, visibility: 'private', tiers: [], canEdit: true });
    expect((await ctx.json('assistants/list', {}, ann)).body).toEqual({ assistants: [a], max: 100 });
    expect((await ctx.json('assistants/get', { assistantId: a.id }, ann)).body.assistant).toEqual(a);
    expect((await ctx.json('assistants/list', {}, bob)).body.assistants).toEqual([]);
    for (const path of ['assistants/get', 'assistants/update', 'assistants/delete']) expect((await ctx.json(path, { assistantId: a.id }, bob)).status).toBe(404);

    const updated = (await ctx.json('assistants/update', { assistantId: a.id, instructions: 'Recommend oolong.', tools: ['history'] }, ann)).body.assistant;
    expect(updated).toMatchObject({ name: 'Tea sommelier', instructions: 'Recommend oolong.', tools: ['history'] });
    expect((await ctx.json('assistants/delete', { assistantId: a.id }, ann)).body).toEqual({ success: true });
    expect((await ctx.json('assistants/get', { assistantId: a.id }, ann)).status).toBe(404);
  });

  test('refusals: a blank name, a model not for the caller\'s tier, sharing by a non-admin', async () => {
    const { ctx, admin, ann } = await setup();
    expect((await create(ctx, ann, { name: '   ' })).status).toBe(400);
    const model = (await ctx.json('chat/listModels', {}, ann)).body.models[0].id;
    expect((await ctx.json('admin/setModelSettings', { id: model, tiers: ['PRO'] }, admin)).status).toBe(200);
    const badModel = await create(ctx, ann, { name: 'X', model });
    expect(badModel.status).toBe(400);
    expect(badModel.body.data.issues[0]).toEqual({ path: ['model'], message: expect.stringContaining('not included in your subscription') });
    // Shared: the model must be open to whoever it is shared with.
    expect((await create(ctx, admin, { name: 'X', model, shared: true })).status).toBe(400);
    expect((await create(ctx, admin, { name: 'X', model, shared: true, visibility: 'tiers', tiers: ['PRO'] })).status).toBe(200);
    expect((await create(ctx, ann, { name: 'X', shared: true })).status).toBe(403);
    expect((await create(ctx, ann, { name: 'Y', starters: ['1', '2', '3', '4', '5'] })).status).toBe(400);
  });

  test('chat/stream with assistantId: its instructions and tools, its model; the conversation keeps it; deleted, Parley answers again', async () => {
    const { ctx, ann, bob } = await setup();
    const model = (await ctx.json('chat/listModels', {}, ann)).body.models[0].id;
    const a = (await create(ctx, ann, { name: 'Historian', instructions: 'Speak like a historian.', model, tools: ['history'] })).body.assistant;
    const first = await readFrames(await ctx.call('chat/stream', { message: 'hello', assistantId: a.id }, ann));
    expect(typesOf(first).at(-1)).toBe('done');
    expect(first[1]!.data.model).toBe(model);
    const conversationId = first[0]!.data.conversationId;
    expect(systemOf(chatRequests()[0])).toContain('You answer as the assistant "Historian". Its instructions:\nSpeak like a historian.');
    expect(toolNames(chatRequests()[0])).toEqual(['search_history']);

    // The next turn names no assistant: the conversation's goes on.
    await readFrames(await ctx.call('chat/stream', { message: 'and then?', conversationId }, ann));
    expect(systemOf(chatRequests()[1])).toContain('Speak like a historian.');
    const listed = (await ctx.json('chat/listConversations', {}, ann)).body.conversations;
    expect(listed.find((c: any) => c.id === conversationId).assistantId).toBe(a.id);

    // No tools at all.
    await ctx.json('assistants/update', { assistantId: a.id, tools: [] }, ann);
    await readFrames(await ctx.call('chat/stream', { message: 'again', conversationId }, ann));
    expect(chatRequests()[2].tools).toBeUndefined();

    // Someone else's assistant: 400 before any stream.
    const refused = await ctx.call('chat/stream', { message: 'hi', assistantId: a.id }, bob);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).data.issues[0].path).toEqual(['assistantId']);

    await ctx.json('assistants/delete', { assistantId: a.id }, ann);
    await readFrames(await ctx.call('chat/stream', { message: 'still there?', conversationId }, ann));
    expect(systemOf(chatRequests().at(-1))).not.toContain('historian');
    expect((await ctx.json('chat/listConversations', {}, ann)).body.conversations.find((c: any) => c.id === conversationId).assistantId).toBeNull();

    // Each turn's usage names the assistant that answered it (docs/usage.md), newest first.
    const turns = async () => (await ctx.store.read((tx) => listUsageRecords(tx, ann.user.id, { limit: 10 }))).filter((r) => r.kind === 'chat');
    await until(async () => (await turns()).length === 4, 'the four turns recorded');
    expect((await turns()).map((r) => r.assistantId)).toEqual([null, a.id, a.id, a.id]);
  });

  test('a branch keeps the assistant (regenerating makes one); one made by a writer who may not use it goes on with Parley', async () => {
    const { ctx, ann, bob } = await setup();
    const a = (await create(ctx, ann, { name: 'Poet', instructions: 'Answer in verse.' })).body.assistant;
    const first = await readFrames(await ctx.call('chat/stream', { message: 'hello', assistantId: a.id }, ann));
    const conversationId = first[0]!.data.conversationId;
    const items = (await ctx.json('chat/getConversation', { conversationId }, ann)).body.items;
    const branched = await ctx.json('chat/branchConversation', { conversationId, fromItemId: items[0].id }, ann);
    expect(branched.status).toBe(200);
    const branchId = branched.body.conversation.id;
    expect((await ctx.json('chat/getConversation', { conversationId: branchId }, ann)).body.conversation.assistantId).toBe(a.id);
    // Its next turn, naming no assistant, is the assistant's.
    await readFrames(await ctx.call('chat/stream', { message: 'again', conversationId: branchId }, ann));
    expect(systemOf(chatRequests().at(-1))).toContain('Answer in verse.');

    // Bob writes to Ann's conversation but may not use her own assistant: his branch is Parley's.
    await shareWith(ctx, conversationId, ann, bob);
    const his = await ctx.json('chat/branchConversation', { conversationId, fromItemId: items[0].id }, bob);
    expect(his.status).toBe(200);
    expect((await ctx.json('chat/getConversation', { conversationId: his.body.conversation.id }, bob)).body.conversation.assistantId).toBeNull();
  });

  test('one the caller may no longer use stops answering: its instructions and parameters leave the turn', async () => {
    const { ctx, admin, ann } = await setup();
    const pro = (await create(ctx, admin, { name: 'Pro coach', instructions: 'Coach like a pro.', shared: true, visibility: 'tiers', tiers: [ann.user.subscriptionTier], parameters: { temperature: 0.2 } })).body.assistant;
    const first = await readFrames(await ctx.call('chat/stream', { message: 'hello', assistantId: pro.id }, ann));
    const conversationId = first[0]!.data.conversationId;
    expect(systemOf(chatRequests().at(-1))).toContain('Coach like a pro.');
    await ctx.json('assistants/update', { assistantId: pro.id, tiers: ['SOMEONE_ELSE'] }, admin);
    await readFrames(await ctx.call('chat/stream', { message: 'and now?', conversationId }, ann));
    expect(systemOf(chatRequests().at(-1))).not.toContain('Coach like a pro.');
    expect(chatRequests().at(-1).temperature).toBeUndefined();
  });

  test('shared by an admin: with everyone, or with some tiers; only admins change them', async () => {
    const { ctx, admin, ann, bob } = await setup();
    const everyone = (await create(ctx, admin, { name: 'Helper', instructions: 'Be brief.', shared: true })).body.assistant;
    expect(everyone).toMatchObject({ shared: true, visibility: 'everyone', canEdit: true });
    const pro = (await create(ctx, admin, { name: 'Pro coach', shared: true, visibility: 'tiers', tiers: ['PRO'] })).body.assistant;
    expect(pro).toMatchObject({ visibility: 'tiers', tiers: ['PRO'] });

    const annSees = (await ctx.json('assistants/list', {}, ann)).body.assistants;
    expect(annSees.map((a: any) => [a.name, a.canEdit])).toEqual([['Helper', false]]);
    expect((await ctx.json('assistants/update', { assistantId: everyone.id, name: 'Mine now' }, ann)).status).toBe(403);
    expect((await ctx.json('assistants/delete', { assistantId: everyone.id }, ann)).status).toBe(403);
    expect((await ctx.call('chat/stream', { message: 'hi', assistantId: pro.id }, ann)).status).toBe(400);

    await ctx.store.write((tx) => updateUser(tx, bob.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    expect((await ctx.json('assistants/list', {}, bob)).body.assistants.map((a: any) => a.name)).toEqual(['Helper', 'Pro coach']);
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'hi', assistantId: pro.id }, bob));
    expect(typesOf(frames).at(-1)).toBe('done');
    // The admin sees every shared one, and changes who sees it.
    expect((await ctx.json('assistants/update', { assistantId: pro.id, visibility: 'everyone' }, admin)).body.assistant).toMatchObject({ visibility: 'everyone', tiers: [] });
    expect((await ctx.json('assistants/list', {}, ann)).body.assistants.map((a: any) => a.name)).toEqual(['Helper', 'Pro coach']);
  });
});
