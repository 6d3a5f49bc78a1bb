import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, until, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf } from './sse';
import { startFakeOpenAI, textEvents, toolCallsThenAnswer } from './fakes/openai';
import { startFakeSearxng } from './fakes/searxng';
import { startFakeEmbeddings } from './fakes/openai-embeddings';
import { startFakeImages } from './fakes/openai-images';
import { startFakeAudio } from './fakes/openai-audio';
import { startFakeAnthropic } from './fakes/anthropic';
import { updateUser } from '../src/account/account.store';
import { groupWith, send } from './group-helpers';
import { listUsageRecords } from '../src/usage/usage.store';
import type { UsageRecord } from '../src/db/schema';
import type { Config } from '../src/config';

// Usage metering's records (docs/usage.md): every model call writes one row with what the
// provider reported, or Parley's count marked `estimated`, on either store.

setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
const searx = startFakeSearxng();
const embeddings = startFakeEmbeddings();
const images = startFakeImages();
const audio = startFakeAudio();
const claude = startFakeAnthropic();
const dirs: string[] = [];
afterAll(() => {
  for (const s of [openai, searx, embeddings, images, audio, claude]) s.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});
beforeEach(() => {
  openai.reported.length = 0;
  openai.requests.length = 0;
  openai.chatScript = () => ({ deltas: [{ content: 'Hello ' }, { content: 'there.' }] });
  openai.responsesScript = () => textEvents('Hello from the fake.');
});

const chatConfig = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat',
  aiBaseUrl: openai.url,
  aiModel: 'small',
  researchModel: 'small',
  searchProvider: 'searxng',
  searxngUrl: searx.url,
  fetchAllowPrivate: true,
  researchBreadth: 1,
  researchDepth: 1,
  rateLimitAi: undefined,
  ...extra,
});

async function setup(config: Partial<Config> = chatConfig()) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-usage-'));
  dirs.push(dataDir);
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }], config: { dataDir, ...config } });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

const recordsOf = (ctx: TestContext, as: TestUser) => ctx.store.read((tx) => listUsageRecords(tx, as.user.id, { limit: 100 }));
/** The user's records once there are `n` (usage is written behind the answer, with the group commit). */
async function records(ctx: TestContext, as: TestUser, n: number): Promise<UsageRecord[]> {
  await until(async () => (await recordsOf(ctx, as)).length >= n, `${n} usage records`);
  const rows = await recordsOf(ctx, as);
  expect(rows.length).toBe(n);
  return rows.reverse();
}
/** The catalogue id of the default chat model. */
const recordsModel = async (ctx: TestContext, as: TestUser): Promise<string | undefined> => (await ctx.json('chat/listModels', {}, as)).body.default;
const tokensOf = (r: UsageRecord) => ({ in: r.inputTokens, out: r.outputTokens, cached: r.cachedTokens, reasoning: r.reasoningTokens });

describe('usage records', () => {
  test('a chat turn (openai-chat): asks for the usage and records what the provider reported, with the user, key, connection and model', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = () => ({
      deltas: [{ reasoning_content: 'Thinking.' }, { content: 'Hi.' }],
      usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100 }, completion_tokens_details: { reasoning_tokens: 12 } },
    });
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Hi' }, ann));
    expect(typesOf(frames).at(-1)).toBe('done');
    const sent = openai.requests.find((r) => r.path === 'POST /v1/chat/completions')!.body;
    expect(sent.stream_options).toEqual({ include_usage: true });
    const [row] = await records(ctx, ann, 1);
    expect(row).toMatchObject({ userId: ann.user.id, apiKeyId: ann.keyId, kind: 'chat', estimated: false, units: 0, creditsMicro: 0, responseId: frames[1]!.data.responseId });
    expect(tokensOf(row!)).toEqual({ in: 120, out: 30, cached: 100, reasoning: 12 });
    expect(row!.model).toEndWith('/small');
    expect(row!.connectionId).toBeString();
  });

  test('each tool round is one call, one record; the sums equal what the provider reported', async () => {
    const { ctx, ann } = await setup(chatConfig({ imagesBaseUrl: images.url }));
    openai.chatScript = toolCallsThenAnswer([{ id: 'c1', name: 'generate_image', args: { prompt: 'a boat' } }], 'Done.');
    await readFrames(await ctx.call('chat/stream', { message: 'Draw a boat' }, ann));
    const rows = await records(ctx, ann, 3);
    const chat = rows.filter((r) => r.kind === 'chat');
    expect(chat.length).toBe(2);
    const reported = openai.reported.map((r) => r.usage);
    expect(chat.map((r) => [r.inputTokens, r.outputTokens])).toEqual(reported.map((u) => [u.prompt_tokens, u.completion_tokens]));
    // The image the tool made: one unit of the images connection's model.
    const image = rows.find((r) => r.kind === 'images')!;
    expect(image).toMatchObject({ units: 1, apiKeyId: ann.keyId, estimated: false });
    expect(image.model).toEndWith('/gpt-image-1');
  });

  test('a /v1 chat completion: recorded as v1 with the key, as the provider reported it', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'Hi.' }], usage: { prompt_tokens: 55, completion_tokens: 4, total_tokens: 59 } });
    const res = await ctx.app.handle(
      new Request('http://localhost/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${ann.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: (await recordsModel(ctx, ann)) ?? 'small', messages: [{ role: 'user', content: 'Hi' }] }),
      }),
    );
    expect(res.status).toBe(200);
    const [row] = await records(ctx, ann, 1);
    expect(row).toMatchObject({ kind: 'v1', apiKeyId: ann.keyId, inputTokens: 55, outputTokens: 4, estimated: false });
  });

  test('a server that reports no usage: counted from the request and the answer, marked estimated', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'A fairly long answer of several words.' }], usage: false });
    await readFrames(await ctx.call('chat/stream', { message: 'Tell me something' }, ann));
    const [row] = await records(ctx, ann, 1);
    expect(row!.estimated).toBe(true);
    expect(row!.inputTokens).toBeGreaterThan(0);
    expect(row!.outputTokens).toBeGreaterThan(0);
    expect(openai.reported).toEqual([]);
  });

  test('a turn through openai-responses: the terminal event\'s usage', async () => {
    const { ctx, ann } = await setup({ aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test' });
    openai.responsesUsage = () => ({ input_tokens: 77, input_tokens_details: { cached_tokens: 7 }, output_tokens: 11, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 88 });
    try {
      await readFrames(await ctx.call('chat/stream', { message: 'Hi' }, ann));
      const [row] = await records(ctx, ann, 1);
      expect(row).toMatchObject({ kind: 'chat', estimated: false });
      expect(tokensOf(row!)).toEqual({ in: 77, out: 11, cached: 7, reasoning: 3 });
    } finally {
      openai.responsesUsage = undefined;
    }
  });

  test('a turn through Anthropic: each round\'s usage, the cache read and written counted as input', async () => {
    const { ctx, ann } = await setup();
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { isAdmin: true }, Date.now()));
    const added = await ctx.json('admin/addConnection', { name: 'claude', kind: 'chat', api: 'anthropic', baseUrl: claude.url, credential: claude.apiKey, options: { model: 'claude-sonnet-4-6' } }, ann);
    expect(added.status).toBe(200);
    claude.script = () => ({ blocks: [{ type: 'text', text: 'From Claude.' }], usage: { input: 50, output: 9, cacheRead: 300, cacheWrite: 20 } });
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Hi', model: 'claude/claude-sonnet-4-6' }, ann));
    expect(typesOf(frames).at(-1)).toBe('done');
    const [row] = await records(ctx, ann, 1);
    expect(row).toMatchObject({ kind: 'chat', model: 'claude/claude-sonnet-4-6', connectionId: added.body.connection.id, estimated: false });
    expect(tokensOf(row!)).toEqual({ in: 370, out: 9, cached: 300, reasoning: 0 });
  });

  test('deep research: every round (planning, report) recorded as research, summing to what was reported', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'The report.' }] } : { deltas: [{ content: '[]' }] });
    const frames = await readFrames(await ctx.call('chat/streamDeepResearch', { message: 'Why is the sky blue?' }, ann));
    expect(typesOf(frames).at(-1)).toBe('done');
    const n = openai.reported.length;
    expect(n).toBeGreaterThanOrEqual(2);
    const rows = await records(ctx, ann, n);
    expect(rows.every((r) => r.kind === 'research' && !r.estimated)).toBe(true);
    const sum = (f: (x: { input: number; output: number }) => number) => (xs: { input: number; output: number }[]) => xs.reduce((a, x) => a + f(x), 0);
    const rep = openai.reported.map((r) => ({ input: r.usage.prompt_tokens, output: r.usage.completion_tokens }));
    expect(sum((x) => x.input)(rows.map((r) => ({ input: r.inputTokens, output: r.outputTokens })))).toBe(sum((x) => x.input)(rep));
    expect(sum((x) => x.output)(rows.map((r) => ({ input: r.inputTokens, output: r.outputTokens })))).toBe(sum((x) => x.output)(rep));
  });

  test('a group answer is the usage of the member who addressed the assistant', async () => {
    const { ctx, ann, bob } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'Sunny.' }], usage: { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 } });
    const g = await groupWith(ctx, ann, [bob]);
    await send(ctx, bob, g.id, '@ai weather?');
    const [row] = await records(ctx, bob, 1);
    expect(row).toMatchObject({ kind: 'group', apiKeyId: bob.keyId, inputTokens: 40, outputTokens: 2, estimated: false });
    expect(await recordsOf(ctx, ann)).toEqual([]);
  });

  test('embeddings: a document\'s, its owner\'s; a search query\'s, the searcher\'s with the key', async () => {
    const { ctx, ann } = await setup({ embeddingsBaseUrl: embeddings.url, embeddingsApiKey: 'sk-e', embeddingsModel: 'fake-embed' });
    const form = new FormData();
    form.append('file', new Blob(['Boats float on water because of buoyancy. '.repeat(20)]), 'boats.txt');
    const up = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': ann.key }, body: form }));
    expect(up.status).toBe(200);
    const [doc] = await records(ctx, ann, 1);
    expect(doc).toMatchObject({ kind: 'embeddings', apiKeyId: null, estimated: false, outputTokens: 0 });
    expect(doc!.inputTokens).toBeGreaterThan(0);
    expect(doc!.model).toEndWith('/fake-embed');
    const found = await ctx.json('files/searchFiles', { query: 'why do boats float', mode: 'semantic' }, ann);
    expect(found.status).toBe(200);
    const rows = await records(ctx, ann, 2);
    // The fake counts a token per four characters, as it reports.
    expect(rows[1]).toMatchObject({ kind: 'embeddings', apiKeyId: ann.keyId, inputTokens: Math.ceil('why do boats float'.length / 4), estimated: false });
  });

  test('speech: transcription in seconds, spoken text in characters', async () => {
    const { ctx, ann } = await setup({ sttBaseUrl: audio.url, sttApiKey: 'sk-a', ttsBaseUrl: audio.url, ttsApiKey: 'sk-a' });
    audio.transcribe = () => ({ text: 'hello', duration: 4.2 });
    const form = new FormData();
    const wav = new Uint8Array(3000);
    wav.set([...'RIFF'].map((c) => c.charCodeAt(0)));
    wav.set([...'WAVEfmt '].map((c) => c.charCodeAt(0)), 8);
    form.append('file', new Blob([wav]), 'a.wav');
    const heard = await ctx.app.handle(new Request('http://localhost/api/audio/transcribe', { method: 'POST', headers: { 'x-api-key': ann.key }, body: form }));
    expect(heard.status).toBe(200);
    const [stt] = await records(ctx, ann, 1);
    expect(stt).toMatchObject({ kind: 'stt', units: 5, estimated: false, apiKeyId: ann.keyId });
    const spoken = await ctx.call('audio/speak', { text: 'Hello there' }, ann);
    expect(spoken.status).toBe(200);
    await spoken.arrayBuffer();
    const rows = await records(ctx, ann, 2);
    expect(rows[1]).toMatchObject({ kind: 'tts', units: 'Hello there'.length, estimated: false });
  });
});
