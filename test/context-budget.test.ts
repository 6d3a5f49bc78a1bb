/**
 * Issue 18 item 4 through HTTP on a real database, against the fake Chat Completions server
 * dressed as Ollama, vLLM or an unknown server: where the context window comes from, and that
 * every request then fits it with room for the answer. (Exact counting through llama-server's
 * tokenizer is proven against the real server: scripts/real-models/real-models-budget.test.ts.)
 */
import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { createTestContext, type TestContext } from './helpers';
import { readFrames, typesOf } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import { promptTokens } from './fakes/llama-template';
import type { Config } from '../src/config';
import { estimateTokens } from '../src/ai/count-tokens';
import { probeContextWindow } from '../src/ops/probe-capabilities';

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

async function context(extra: Partial<Config> = {}): Promise<TestContext> {
  return await createTestContext({
    users: [{ email: 'ann@example.org' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small', rateLimitAi: { capacity: 1000, perMs: 1000 }, ...extra },
  });
}

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
/** The request's size as Parley estimates it without a tokenizer (count-tokens.ts), plus the tools. */
const estimated = (body: any) =>
  16 + body.messages.reduce((n: number, m: any) => n + 8 + estimateTokens(String(m.content)), 0) + (body.tools ? estimateTokens(JSON.stringify(body.tools)) : 0);

/** `turns` chat turns of ~600 bytes each in one conversation, every one answered. */
async function converse(ctx: TestContext, turns: number): Promise<void> {
  let conversationId: string | undefined;
  for (let i = 1; i <= turns; i++) {
    const frames = await ctx.call('chat/stream', { message: `Turn ${i}: ${'tell me more about the garden. '.repeat(20)}`, ...(conversationId ? { conversationId } : {}) }, ctx.users[0]).then(readFrames);
    expect(typesOf(frames).at(-1)).toBe('done');
    conversationId ??= frames[0]!.data.conversationId;
  }
}

beforeEach(() => {
  openai.requests.length = 0;
  openai.gets = {};
  openai.props = undefined;
  openai.chatScript = () => ({ deltas: [{ content: 'A short answer.' }] });
});

describe('the context window, and requests that fit it', () => {
  test('Ollama: budgeted to the num_ctx it runs the model at (/api/ps), the oldest turns left out, the newest kept', async () => {
    openai.gets = { '/api/version': { version: '0.12.6' }, '/api/ps': { models: [{ name: 'small:latest', model: 'small:latest', context_length: 3000 }] } };
    await converse(await context(), 20);
    const last = chatRequests().at(-1)!;
    // Room: 3,000 less a quarter kept for the answer.
    expect(estimated(last)).toBeLessThanOrEqual(2250);
    // Counted by estimate: no answer limit of Parley's own (window minus an estimate could overrun it).
    expect(last.max_tokens).toBeUndefined();
    expect(last.messages[0]).toMatchObject({ role: 'system' });
    expect(last.messages.at(-1).content).toStartWith('Turn 20: ');
    expect(JSON.stringify(last.messages)).not.toContain('Turn 1: ');
    // A history that fits goes whole.
    expect(chatRequests()[1]!.messages.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  test('Ollama with the model not loaded yet: 2,048 tokens, the smallest default it has shipped', async () => {
    openai.gets = { '/api/version': { version: '0.12.6' }, '/api/ps': { models: [] } };
    await converse(await context(), 12);
    const last = chatRequests().at(-1)!;
    expect(estimated(last)).toBeLessThanOrEqual(1536);
    expect(last.max_tokens).toBeUndefined();
  });

  test('vLLM: the window is /v1/models max_model_len', async () => {
    openai.gets = { '/v1/models': { object: 'list', data: [{ id: 'small', object: 'model', max_model_len: 2500 }] } };
    await converse(await context(), 12);
    const last = chatRequests().at(-1)!;
    expect(estimated(last)).toBeLessThanOrEqual(1875);
    expect(last.max_tokens).toBeUndefined();
  });

  test('a server that says nothing (OpenAI): no budget, the whole history and no answer limit', async () => {
    await converse(await context(), 8);
    const last = chatRequests().at(-1)!;
    expect(last.messages.filter((m: any) => m.role === 'user')).toHaveLength(8);
    expect(last.max_tokens).toBeUndefined();
    expect(last.max_completion_tokens).toBeUndefined();
  });

  test('PARLEY_AI_CONTEXT_TOKENS budgets any server; an unknown one gets max_completion_tokens (OpenAI reasoning models refuse max_tokens)', async () => {
    await converse(await context({ aiContextTokens: 2000, aiAnswerTokens: 300 }), 10);
    const last = chatRequests().at(-1)!;
    expect(estimated(last)).toBeLessThanOrEqual(1700);
    expect(last.max_completion_tokens).toBe(300);
    expect(last.max_tokens).toBeUndefined();
  });

  test('PARLEY_AI_CONTEXT_TOKENS alone (OpenAI): the history fits, and no answer limit is sent that could pass the model’s output cap', async () => {
    await converse(await context({ aiContextTokens: 2000 }), 10);
    const last = chatRequests().at(-1)!;
    expect(estimated(last)).toBeLessThanOrEqual(1500);
    expect(last.max_completion_tokens).toBeUndefined();
    expect(last.max_tokens).toBeUndefined();
  });

  test('the estimate runs over the true count for digits and other scripts, not under', () => {
    // One token per digit (Llama, Qwen, Mistral and Gemma split numbers), CJK at most two per character.
    expect(estimateTokens('1234567890'.repeat(4))).toBeGreaterThanOrEqual(40);
    expect(estimateTokens('你好世界'.repeat(7))).toBeGreaterThanOrEqual(28);
    expect(estimateTokens('The cat sat on the mat.')).toBe(8);
  });

  test('a server that refuses for the context’s size although the count said it fits: the turn goes again once, fitted to less', async () => {
    // A server whose true count runs above Parley's estimate (an image, a script the estimate undercounts).
    openai.chatScript = (body) =>
      estimated(body) > 1000 ? { fail: 400, message: 'the request exceeds the available context size, try increasing it' } : { deltas: [{ content: 'A short answer.' }] };
    await converse(await context({ aiContextTokens: 2000 }), 10);
    const sizes = chatRequests().map(estimated);
    expect(sizes.some((n) => n > 1000)).toBe(true);
    expect(sizes.at(-1)!).toBeLessThanOrEqual(1000);
  });

  test('the tool definitions give way before the newest message does', async () => {
    // Parley's tools (canvas, history search) take ~350 estimated tokens: more than 700 tokens have beside the prompt.
    const ctx = await context({ aiContextTokens: 700 });
    await converse(ctx, 1);
    const last = chatRequests().at(-1)!;
    expect(estimated(last)).toBeLessThanOrEqual(525);
    expect(last.tools).toBeUndefined();
    expect(last.messages.at(-1).content).toStartWith('Turn 1: ');
  });

  test('a message too long for the window on its own ends with a clear error and nothing is sent', async () => {
    const ctx = await context({ aiContextTokens: 1000 });
    const frames = await ctx.call('chat/stream', { message: 'word '.repeat(3000) }, ctx.users[0]).then(readFrames);
    expect(frames.at(-1)!.data).toMatchObject({ type: 'error' });
    expect(frames.at(-1)!.data.message).toMatch(/^The message is too long for the AI model: it takes about \d+ tokens, and the model has room for 750 beside its answer\./);
    expect(chatRequests()).toHaveLength(0);
  });
});

describe('llama-server: counted by its own tokenizer, or bounded without a count', () => {
  const llama = (nCtx: number) => ({ default_generation_settings: { n_ctx: nCtx }, model_path: '/models/small.gguf', chat_template: '{# ChatML #}' });
  const calls = (path: string) => openai.requests.filter((r) => r.path === path).length;
  /** Until the fake has answered `n` renderings: the budget learns frames a moment after a turn. */
  async function rendered(n: number): Promise<void> {
    const until = Date.now() + 5000;
    while (calls('POST /apply-template') < n && Date.now() < until) await Bun.sleep(20);
    expect(calls('POST /apply-template')).toBe(n);
    // Answered and taken in, not only received (a moment, even on a busy machine).
    await Bun.sleep(100);
  }

  test('a conversation that fits: its first turn is counted, the next ones are sent on a bound that fits, with an answer limit that keeps to the window', async () => {
    openai.props = llama(4000);
    const ctx = await context();
    let conversationId: string | undefined;
    for (let i = 1; i <= 6; i++) {
      const frames = await ctx.call('chat/stream', { message: `Turn ${i}: ${'tell me more about the garden. '.repeat(5)}`, ...(conversationId ? { conversationId } : {}) }, ctx.users[0]).then(readFrames);
      expect(typesOf(frames).at(-1)).toBe('done');
      conversationId ??= frames[0]!.data.conversationId;
      // The first turn: one count, then its own shape and the next turn's learned; after it, the next turn's.
      await rendered(i === 1 ? 3 : 2 + i);
    }
    // One exact count: the first turn's.
    expect(calls('POST /tokenize')).toBe(1);
    const sent = chatRequests();
    expect(sent).toHaveLength(6);
    expect(sent.at(-1)!.messages.filter((m: any) => m.role === 'user')).toHaveLength(6);
    for (const body of sent) {
      expect(promptTokens(body)).toBeLessThanOrEqual(3000);
      expect(body.max_tokens).toBeGreaterThanOrEqual(1000);
      expect(promptTokens(body) + body.max_tokens).toBeLessThanOrEqual(4000);
    }
  });

  test('a conversation that outgrows the window: fitted by exact counts, nothing refused, the newest turn kept', async () => {
    openai.props = llama(1500);
    await converse(await context(), 16);
    const sent = chatRequests();
    expect(sent).toHaveLength(16);
    for (const body of sent) expect(promptTokens(body)).toBeLessThanOrEqual(1125);
    expect(sent.at(-1)!.messages.at(-1).content).toStartWith('Turn 16: ');
    expect(JSON.stringify(sent.at(-1)!.messages)).not.toContain('Turn 1: ');
  });
});

describe('parley doctor: the context window', () => {
  const target = { provider: 'openai-chat', baseUrl: openai.url, model: 'small', settings: { tools: undefined, images: undefined } };
  test('says where the window comes from and how tokens are counted; warns when Ollama’s is only assumed', async () => {
    openai.gets = { '/api/version': { version: '0.12.6' }, '/api/ps': { models: [] } };
    expect(await probeContextWindow(target)).toMatchObject({
      status: 'warn',
      detail: '2048 tokens (Ollama with the model not loaded: its smallest default, assumed), estimated (3 bytes a token); 512 kept for the answer',
    });
    openai.gets = {};
    openai.props = { default_generation_settings: { n_ctx: 8192 } };
    expect(await probeContextWindow(target)).toMatchObject({ status: 'ok', detail: "8192 tokens (llama-server /props), counted by the server's tokenizer; 2048 kept for the answer" });
    openai.props = undefined;
    expect(await probeContextWindow(target)).toMatchObject({ status: 'ok', detail: 'unknown (not said by the server): the history is sent whole' });
    expect(await probeContextWindow({ ...target, contextTokens: 32768, answerTokens: 1000 })).toMatchObject({ detail: '32768 tokens (PARLEY_AI_CONTEXT_TOKENS), estimated (3 bytes a token); 1000 kept for the answer' });
  });
});
