/**
 * An assistant's parameters (docs/assistants.md, "Parameters"): temperature, top_p and the answer's
 * token limit, validated, returned, and sent with each of its turns by every provider (the fake
 * upstreams record what they were sent): openai-chat, openai-responses and anthropic.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf } from './sse';
import { updateUser } from '../src/account/account.store';
import { fakeAiForFile } from './support/fake-ai-for-file';
import { startFakeAnthropic } from './fakes/anthropic';
import type { Config } from '../src/config';

setDefaultTimeout(30_000);

const { openai } = fakeAiForFile();
const claude = startFakeAnthropic();
afterAll(() => claude.stop());

async function setup(config: Partial<Config> = {}) {
  const ctx = await createTestContext({
    users: [{ email: 'ann@example.org', name: 'Ann' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined, ...config },
  });
  const ann = ctx.users[0] as TestUser;
  return { ctx, ann };
}

const PARAMETERS = { temperature: 0.3, topP: 0.9, maxOutputTokens: 256 };

async function turnWith(ctx: TestContext, ann: TestUser, body: Record<string, unknown>) {
  const made = await ctx.json('assistants/create', { name: 'Careful', ...body }, ann);
  expect(made.status).toBe(200);
  const frames = await readFrames(await ctx.call('chat/stream', { message: 'Hi', assistantId: made.body.assistant.id }, ann));
  expect(typesOf(frames).at(-1)).toBe('done');
  return made.body.assistant;
}

const streamed = (path: string) => openai.requests.filter((r) => r.path === path && r.body?.stream).at(-1)!.body;

describe('assistant parameters', () => {
  test('validated, returned with nulls for the defaults, replaced whole on update', async () => {
    const { ctx, ann } = await setup();
    for (const parameters of [{ temperature: 2.5 }, { temperature: -0.1 }, { topP: -0.1 }, { topP: 1.5 }, { maxOutputTokens: 0 }, { maxOutputTokens: 1.5 }]) {
      const res = await ctx.json('assistants/create', { name: 'Bad', parameters }, ann);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('parameters');
    }
    const plain = (await ctx.json('assistants/create', { name: 'Plain' }, ann)).body.assistant;
    expect(plain.parameters).toEqual({ temperature: null, topP: null, maxOutputTokens: null });
    const set = (await ctx.json('assistants/update', { assistantId: plain.id, parameters: PARAMETERS }, ann)).body.assistant;
    expect(set.parameters).toEqual(PARAMETERS);
    const other = (await ctx.json('assistants/update', { assistantId: plain.id, name: 'Renamed' }, ann)).body.assistant;
    expect(other.parameters).toEqual(PARAMETERS);
    const replaced = (await ctx.json('assistants/update', { assistantId: plain.id, parameters: { temperature: 1, topP: null } }, ann)).body.assistant;
    expect(replaced.parameters).toEqual({ temperature: 1, topP: null, maxOutputTokens: null });
  });

  test('openai-chat: temperature, top_p and max_tokens reach the model; none without an assistant', async () => {
    const { ctx, ann } = await setup();
    await turnWith(ctx, ann, { parameters: PARAMETERS });
    const body = streamed('POST /v1/chat/completions');
    expect(body.temperature).toBe(0.3);
    expect(body.top_p).toBe(0.9);
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(256);

    await readFrames(await ctx.call('chat/stream', { message: 'Hi' }, ann));
    const plain = streamed('POST /v1/chat/completions');
    expect([plain.temperature, plain.top_p]).toEqual([undefined, undefined]);
  });

  test('openai-chat: the assistant\'s limit lowers the budget\'s, never raises it', async () => {
    const { ctx, ann } = await setup({ aiContextTokens: 8192, aiAnswerTokens: 100 });
    await turnWith(ctx, ann, { parameters: { maxOutputTokens: 5000 } });
    const body = streamed('POST /v1/chat/completions');
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(100);
  });

  test('openai-responses: temperature, top_p and max_output_tokens', async () => {
    const { ctx, ann } = await setup({ aiProvider: 'openai-responses', aiApiKey: 'sk-test' });
    await turnWith(ctx, ann, { parameters: PARAMETERS });
    const body = streamed('POST /v1/responses');
    expect({ temperature: body.temperature, top_p: body.top_p, max_output_tokens: body.max_output_tokens }).toEqual({ temperature: 0.3, top_p: 0.9, max_output_tokens: 256 });
  });

  test('anthropic: max_tokens from the assistant, temperature clamped to 1 and sent alone (Claude refuses both)', async () => {
    const { ctx, ann } = await setup();
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { isAdmin: true }, Date.now()));
    const added = await ctx.json('admin/addConnection', { name: 'claude', kind: 'chat', api: 'anthropic', baseUrl: claude.url, credential: claude.apiKey, options: { model: 'claude-sonnet-4-6' } }, ann);
    expect(added.status).toBe(200);
    claude.requests.length = 0;
    await turnWith(ctx, ann, { model: 'claude/claude-sonnet-4-6', parameters: { temperature: 1.5, topP: 0.8, maxOutputTokens: 300 } });
    const body = claude.requests.at(-1)!.body;
    expect({ temperature: body.temperature, top_p: body.top_p, max_tokens: body.max_tokens }).toEqual({ temperature: 1, top_p: undefined, max_tokens: 300 });

    claude.requests.length = 0;
    await turnWith(ctx, ann, { model: 'claude/claude-sonnet-4-6', parameters: { topP: 0.8 } });
    expect(claude.requests.at(-1)!.body.top_p).toBe(0.8);
  });
});
