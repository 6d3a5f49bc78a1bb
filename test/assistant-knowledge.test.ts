/**
 * An assistant's knowledge files (docs/assistants.md, "Knowledge and MCP servers"): documents of
 * its owner (a shared one's, an admin's) that its turns always search with read_file and
 * search_files, even for a user who has no documents; that user reads them through the assistant
 * only, and not at all once it is unshared or the file is removed. Through HTTP with the fake
 * OpenAI and embeddings servers, on both stores.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext, TestUser } from './helpers';
import { readFrames, typesOf } from './sse';
import { toolCallsThenAnswer } from './fakes/openai';
import { updateUser } from '../src/account/account.store';
import type { Config } from '../src/config';
import { fakeAiForFile } from './support/fake-ai-for-file';
import { startFakeEmbeddings } from './fakes/openai-embeddings';
import { assistantsContext } from './support/assistant-users';

setDefaultTimeout(30_000);

const fakes = fakeAiForFile();
const { openai } = fakes;
const embeddings = startFakeEmbeddings();
const dirs: string[] = [];
afterAll(() => {
  embeddings.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

async function setup(extra: Partial<Config> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-knowledge-'));
  dirs.push(dataDir);
  return assistantsContext(fakes, { dataDir, ...extra });
}

async function upload(ctx: TestContext, as: TestUser, text: string, filename: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([text]), filename);
  const res = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as.key }, body: form }));
  expect(res.status).toBe(200);
  await ctx.deps.fileText.idle();
  return ((await res.json()) as any).id;
}

const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name);
const toolOutput = () => chatRequests().at(-1)!.messages.find((m: any) => m.role === 'tool')?.content as string;
const turn = async (ctx: TestContext, as: TestUser, body: Record<string, unknown>) => readFrames(await ctx.call('chat/stream', body, as));
const HANDBOOK = 'Staff handbook. The office plant is watered on Thursdays with rainwater from the blue barrel.';

describe("an assistant's knowledge files", () => {
  test('saved: its owner\'s documents only (a shared one, the admin\'s); shown while they exist; they bring the file tools', async () => {
    const { ctx, admin, ann, bob } = await setup();
    const mine = await upload(ctx, ann, 'Ann notes about quinces.', 'notes.txt');
    const bobs = await upload(ctx, bob, 'Bob notes.', 'bob.txt');
    const form = new FormData();
    form.append('file', new Blob([PNG]), 'dot.png');
    const image = ((await (await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': ann.key }, body: form }))).json()) as any).id;

    const refused = await ctx.json('assistants/create', { name: 'Mixed', knowledgeFileIds: [mine, bobs, image, 'nope'] }, ann);
    expect(refused.status).toBe(400);
    expect(refused.body.data.issues.map((i: any) => i.path)).toEqual([['knowledgeFileIds', 1], ['knowledgeFileIds', 2], ['knowledgeFileIds', 3]]);
    expect(refused.body.data.issues[0].message).toBe(`No document ${bobs} of yours: an assistant's knowledge is documents its owner uploaded (files/listFiles).`);

    const a = (await ctx.json('assistants/create', { name: 'Quince', knowledgeFileIds: [mine, mine], tools: ['history'] }, ann)).body.assistant;
    expect(a).toMatchObject({ knowledgeFileIds: [mine], mcpServerIds: null });
    // Its knowledge brings the file tools, whatever else `tools` names.
    await turn(ctx, ann, { message: 'hi', assistantId: a.id });
    expect(toolNames(chatRequests()[0])).toEqual(['read_file', 'search_files', 'search_history']);
    // A shared one takes the admin's files, not a user's.
    expect((await ctx.json('assistants/create', { name: 'Shared', shared: true, knowledgeFileIds: [mine] }, admin)).status).toBe(400);

    await ctx.json('files/deleteFile', { fileId: mine }, ann);
    expect((await ctx.json('assistants/get', { assistantId: a.id }, ann)).body.assistant.knowledgeFileIds).toEqual([]);
  });

  test("a user with no documents searches and reads a shared assistant's; by id elsewhere they stay the admin's; unshared, or the file removed, the access ends", async () => {
    const { ctx, admin, bob } = await setup();
    const handbook = await upload(ctx, admin, HANDBOOK, 'handbook.txt');
    const helper = (await ctx.json('assistants/create', { name: 'Office helper', shared: true, knowledgeFileIds: [handbook] }, admin)).body.assistant;
    expect(helper.knowledgeFileIds).toEqual([handbook]);

    // Bob has no documents: without the assistant, no file tools.
    await turn(ctx, bob, { message: 'hello' });
    expect(toolNames(chatRequests()[0])).not.toContain('search_files');

    openai.chatScript = toolCallsThenAnswer([{ id: 's1', name: 'search_files', args: { query: 'plant watered' } }], 'On Thursdays.');
    const frames = await turn(ctx, bob, { message: 'When is the plant watered?', assistantId: helper.id });
    expect(toolNames(chatRequests()[1])).toEqual(expect.arrayContaining(['read_file', 'search_files']));
    expect(frames.find((f) => f.data.type === 'file_search.completed')!.data.results).toEqual([{ fileId: handbook, filename: 'handbook.txt', page: null }]);
    expect(toolOutput()).toContain('watered on Thursdays');
    const conversationId = frames[0]!.data.conversationId;

    openai.chatScript = toolCallsThenAnswer([{ id: 'r1', name: 'read_file', args: { fileId: handbook } }], 'Read.');
    await turn(ctx, bob, { message: 'Read it all.', conversationId });
    expect(toolOutput()).toContain('blue barrel');

    // Not his by id: the files operations, his own searches, and a turn without the assistant.
    expect((await ctx.json('files/getFile', { fileId: handbook }, bob)).status).toBe(404);
    expect((await ctx.json('files/searchFiles', { query: 'plant' }, bob)).body.hits).toEqual([]);
    expect((await ctx.call('chat/stream', { message: 'Here it is.', files: [handbook] }, bob)).status).toBe(400);
    openai.chatScript = toolCallsThenAnswer([{ id: 'r2', name: 'read_file', args: { fileId: handbook } }], 'No.');
    const own = await upload(ctx, bob, 'Bob shopping list: apples.', 'list.txt');
    await turn(ctx, bob, { message: 'Read the handbook.' });
    expect(toolOutput()).toBe(`No file with the id ${handbook} is available.`);

    // Unshared (for a tier Bob is not in): the conversation goes on without it, and without its files.
    expect((await ctx.json('assistants/update', { assistantId: helper.id, visibility: 'tiers', tiers: ['PRO'] }, admin)).status).toBe(200);
    openai.chatScript = toolCallsThenAnswer([{ id: 'r3', name: 'read_file', args: { fileId: handbook } }], 'No.');
    await turn(ctx, bob, { message: 'Again.', conversationId });
    expect(chatRequests().at(-2).messages[0].content).not.toContain('Office helper');
    expect(toolOutput()).toBe(`No file with the id ${handbook} is available.`);
    openai.chatScript = toolCallsThenAnswer([{ id: 's2', name: 'search_files', args: { query: 'plant' } }], 'No.');
    await turn(ctx, bob, { message: 'Search.', conversationId });
    expect(toolOutput()).toBe("Nothing found in the user's documents.");

    // Shared again, then the file removed: gone from the assistant and from its turns.
    await ctx.json('assistants/update', { assistantId: helper.id, visibility: 'everyone' }, admin);
    await ctx.json('files/deleteFile', { fileId: own }, bob);
    expect((await ctx.json('files/deleteFile', { fileId: handbook }, admin)).status).toBe(200);
    await turn(ctx, bob, { message: 'Anything?', conversationId });
    expect(toolNames(chatRequests().at(-1))).not.toContain('search_files');
    expect((await ctx.json('assistants/get', { assistantId: helper.id }, bob)).body.assistant.knowledgeFileIds).toEqual([]);
  });

  test('a shared assistant\'s files stop counting when their owner is no longer an admin', async () => {
    const { ctx, admin, bob } = await setup();
    const handbook = await upload(ctx, admin, HANDBOOK, 'handbook.txt');
    const helper = (await ctx.json('assistants/create', { name: 'Office helper', shared: true, knowledgeFileIds: [handbook] }, admin)).body.assistant;
    await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: false }, Date.now()));
    expect(typesOf(await turn(ctx, bob, { message: 'Read the handbook.', assistantId: helper.id })).at(-1)).toBe('done');
    expect(toolNames(chatRequests()[0])).not.toContain('read_file');
  });

  test('searched by meaning too, when embeddings are set up: the vectors of its files are read for its turns', async () => {
    const { ctx, admin, bob } = await setup({ embeddingsBaseUrl: embeddings.url, embeddingsApiKey: 'sk-embed', embeddingsModel: 'fake-embed' });
    const clinic = await upload(ctx, admin, 'The clinic has two physicians on duty every weekday.', 'clinic.txt');
    const helper = (await ctx.json('assistants/create', { name: 'Clinic', shared: true, knowledgeFileIds: [clinic] }, admin)).body.assistant;
    // "doctor" is not a word of the file: only its meaning (the fake's synonyms) finds it.
    openai.chatScript = toolCallsThenAnswer([{ id: 's1', name: 'search_files', args: { query: 'doctor' } }], 'Two.');
    const frames = await turn(ctx, bob, { message: 'How many doctors?', assistantId: helper.id });
    expect(frames.find((f) => f.data.type === 'file_search.completed')!.data.results).toEqual([{ fileId: clinic, filename: 'clinic.txt', page: null }]);
    expect(toolOutput()).toContain('two physicians');
  });
});
