/**
 * Assistants as `/v1` models (docs/openai-api.md, "Assistants"): `GET /v1/models` lists the ones
 * the key's user may use as `assistant:<id>`; chat completions and responses made with one answer
 * with its model and its instructions first, the caller's own system messages and tools after;
 * the usage row names it; `store: true` keeps a conversation with it; one the user may no longer
 * use is OpenAI's 404. Through HTTP with the official `openai` SDK and Vercel's AI SDK (their
 * requests handed to the app), against the fake OpenAI-compatible server, on both stores.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import OpenAI from 'openai';
import { generateText } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createTestContext, until, type TestContext, type TestUser } from './helpers';
import { updateUser } from '../src/account/account.store';
import { listUsageRecords } from '../src/usage/usage.store';
import { modelList, startFakeOpenAI } from './fakes/openai';
import { v1Json } from './support/v1';

setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
openai.gets['/v1/models'] = modelList(['small', 'large']);
afterAll(() => openai.stop());

async function setup() {
  const ctx = await createTestContext({
    users: [{ email: 'admin@example.org' }, { email: 'ann@example.org' }, { email: 'bob@example.org' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined, rateLimitWrite: { capacity: 1000, perMs: 1000 } },
  });
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann, bob };
}

const assistant = async (ctx: TestContext, as: TestUser, body: Record<string, unknown>) => {
  const res = await ctx.json('assistants/create', body, as);
  expect(res.status).toBe(200);
  return res.body.assistant as { id: string };
};

/** A client's fetch answered by the app itself. */
const viaApp = (ctx: TestContext) => (async (url: string | URL | Request, init?: RequestInit) => ctx.app.handle(new Request(url as string, init))) as typeof fetch;
/** The official SDK, its requests answered by the app. */
const sdk = (ctx: TestContext, as: TestUser) => new OpenAI({ baseURL: 'http://localhost/v1', apiKey: as.key, maxRetries: 0, fetch: viaApp(ctx) });

const lastChat = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').at(-1)!.body;
const usageOf = (ctx: TestContext, user: TestUser) => ctx.store.read((tx) => listUsageRecords(tx, user.user.id, { limit: 10 }));

describe('assistants as /v1 models', () => {
  test('GET /v1/models lists the assistants the user may use beside the catalogue, as assistant:<id>', async () => {
    const { ctx, admin, ann, bob } = await setup();
    const own = await assistant(ctx, ann, { name: 'Tea sommelier', description: 'Knows tea.', instructions: 'Recommend a tea.' });
    const everyone = await assistant(ctx, admin, { name: 'Editor', instructions: 'Edit prose.', shared: true });
    const pro = await assistant(ctx, admin, { name: 'Pro only', shared: true, visibility: 'tiers', tiers: ['PRO'] });
    await assistant(ctx, bob, { name: "Bob's" });
    // A model for PRO only (once the catalogue has listed it): an assistant answering with it is not offered to her while she is FREE.
    await v1Json(ctx, 'GET', '/v1/models', undefined, admin);
    expect((await ctx.json('admin/setModelSettings', { id: 'env-ai/large', tiers: ['PRO'] }, admin)).status).toBe(200);
    const onLarge = await assistant(ctx, admin, { name: 'Large', model: 'env-ai/large', shared: true, visibility: 'tiers', tiers: ['PRO'] });

    const { status, body } = await v1Json(ctx, 'GET', '/v1/models', undefined, ann);
    expect(status).toBe(200);
    expect(body.data.map((m: any) => m.id)).toEqual(['env-ai/small', `assistant:${everyone.id}`, `assistant:${own.id}`]);
    expect(body.data[2]).toEqual({ id: `assistant:${own.id}`, object: 'model', created: expect.any(Number), owned_by: 'assistant', name: 'Tea sommelier', description: 'Knows tea.' });
    const one = await v1Json(ctx, 'GET', `/v1/models/assistant:${own.id}`, undefined, ann);
    expect(one.body.owned_by).toBe('assistant');
    expect((await v1Json(ctx, 'GET', `/v1/models/assistant:${pro.id}`, undefined, ann)).status).toBe(404);

    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    const asPro = (await v1Json(ctx, 'GET', '/v1/models', undefined, ann)).body.data.map((m: any) => m.id);
    expect(asPro).toEqual(expect.arrayContaining([`assistant:${pro.id}`, `assistant:${onLarge.id}`, 'env-ai/large']));
  });

  test("chat.completions with an assistant: its model, its instructions first, the caller's system message and tools after; the usage row names it", async () => {
    const { ctx, ann } = await setup();
    const a = await assistant(ctx, ann, { name: 'Pirate', instructions: 'Talk like a pirate.', model: 'env-ai/large' });
    openai.chatScript = () => ({ deltas: [{ content: 'Arr,' }, { content: ' matey.' }] });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
    const c = sdk(ctx, ann);
    const whole = await c.chat.completions.create({
      model: `assistant:${a.id}`,
      messages: [
        { role: 'system', content: 'Answer in code blocks when you write code.' },
        { role: 'user', content: 'Hello' },
      ],
      tools,
    });
    expect(whole.choices[0]!.message.content).toBe('Arr, matey.');
    // Answered as OpenAI answers an alias: with the model that wrote it.
    expect(whole.model).toBe('env-ai/large');
    const sent = lastChat();
    expect(sent.model).toBe('large');
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Talk like a pirate.\n\nAnswer in code blocks when you write code.' },
      { role: 'user', content: 'Hello' },
    ]);
    expect(sent.tools).toEqual(tools);

    // Streamed, without a system message of the caller's: the instructions as one of their own.
    const stream = await c.chat.completions.create({ model: `assistant:${a.id}`, messages: [{ role: 'user', content: 'Again' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Arr, matey.');
    expect(lastChat().messages[0]).toEqual({ role: 'system', content: 'Talk like a pirate.' });

    await until(async () => (await usageOf(ctx, ann)).length === 2, 'both calls recorded');
    const rows = await usageOf(ctx, ann);
    expect(rows.map((r) => [r.kind, r.model, r.assistantId, r.apiKeyId])).toEqual([
      ['v1', 'env-ai/large', a.id, ann.keyId],
      ['v1', 'env-ai/large', a.id, ann.keyId],
    ]);
  });

  test("responses with an assistant: its instructions before the caller's; store: true keeps a conversation with it", async () => {
    const { ctx, ann } = await setup();
    const a = await assistant(ctx, ann, { name: 'Poet', instructions: 'Answer in verse.' });
    openai.chatScript = () => ({ deltas: [{ content: 'Roses are red.' }] });
    const c = sdk(ctx, ann);
    const r = await c.responses.create({ model: `assistant:${a.id}`, instructions: 'Be brief.', input: 'A poem about tea', store: true });
    expect(r.output_text).toBe('Roses are red.');
    // No model of its own: the server's default answers.
    expect(lastChat().model).toBe('small');
    expect(lastChat().messages[0]).toEqual({ role: 'system', content: 'Answer in verse.\n\nBe brief.' });
    const listed = (await ctx.json('chat/listConversations', {}, ann)).body.conversations as { title: string; assistantId: string | null }[];
    expect(listed.find((x) => x.title === 'A poem about tea')?.assistantId).toBe(a.id);
    await until(async () => (await usageOf(ctx, ann)).length === 1, 'the call recorded');
    expect((await usageOf(ctx, ann))[0]!.assistantId).toBe(a.id);
    // And through the operation the user reads them with.
    const listed2 = (await ctx.json('usage/listCalls', {}, ann)).body.calls as { assistantId: string | null }[];
    expect(listed2.map((x) => x.assistantId)).toEqual([a.id]);
  });

  test('Vercel\'s AI SDK names an assistant like any model', async () => {
    const { ctx, ann } = await setup();
    const a = await assistant(ctx, ann, { name: 'Terse', instructions: 'One word answers.' });
    openai.chatScript = () => ({ deltas: [{ content: 'Yes.' }] });
    const provider = createOpenAICompatible({ name: 'parley', baseURL: 'http://localhost/v1', apiKey: ann.key, fetch: viaApp(ctx) });
    const result = await generateText({ model: provider(`assistant:${a.id}`), prompt: 'Ready?' });
    expect(result.text).toBe('Yes.');
    expect(lastChat().messages[0]).toEqual({ role: 'system', content: 'One word answers.' });
  });

  test('an assistant the user may not (or no longer) use: 404 model_not_found, nothing sent upstream', async () => {
    const { ctx, admin, ann, bob } = await setup();
    const shared = await assistant(ctx, admin, { name: 'For FREE', instructions: 'Hi.', shared: true, visibility: 'tiers', tiers: ['FREE'] });
    const bobs = await assistant(ctx, bob, { name: "Bob's", instructions: 'Secret.' });
    const c = sdk(ctx, ann);
    const ask = (model: string) => c.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e);
    openai.chatScript = () => ({ deltas: [{ content: 'Hello.' }] });
    expect((await ask(`assistant:${shared.id}`)).choices[0].message.content).toBe('Hello.');
    const before = openai.requests.length;

    expect((await ctx.json('assistants/update', { assistantId: shared.id, tiers: ['PRO'] }, admin)).status).toBe(200);
    for (const model of [`assistant:${shared.id}`, `assistant:${bobs.id}`, 'assistant:nope', 'assistant:']) {
      const err = await ask(model);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect(err.code).toBe('model_not_found');
      expect(err.param).toBe('model');
      expect(err.message).not.toContain('Secret');
    }
    const gone = await c.responses.create({ model: `assistant:${shared.id}`, input: 'Hi' }).catch((e) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect(openai.requests.length).toBe(before);
  });

  test("the assistant's parameters fill in what the caller leaves unset; the caller's own win", async () => {
    const { ctx, ann } = await setup();
    const a = await assistant(ctx, ann, { name: 'Steady', parameters: { temperature: 0.2, topP: 0.7, maxOutputTokens: 50 } });
    await sdk(ctx, ann).chat.completions.create({ model: `assistant:${a.id}`, messages: [{ role: 'user', content: 'Hi' }] });
    const plain = lastChat();
    expect({ temperature: plain.temperature, top_p: plain.top_p, max: plain.max_tokens ?? plain.max_completion_tokens }).toEqual({ temperature: 0.2, top_p: 0.7, max: 50 });
    await sdk(ctx, ann).chat.completions.create({ model: `assistant:${a.id}`, messages: [{ role: 'user', content: 'Hi' }], temperature: 0.9, max_completion_tokens: 20 });
    const own = lastChat();
    expect({ temperature: own.temperature, top_p: own.top_p, max: own.max_tokens ?? own.max_completion_tokens }).toEqual({ temperature: 0.9, top_p: 0.7, max: 20 });
    await sdk(ctx, ann).responses.create({ model: `assistant:${a.id}`, input: 'Hi' });
    expect(lastChat().temperature).toBe(0.2);
  });
});
