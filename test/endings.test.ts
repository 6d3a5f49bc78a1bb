import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { captureLog, createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf, type Frame } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import { startFakeSearxng } from './fakes/searxng';
import { groupWith, send, subscribe } from './group-helpers';
import type { Config } from '../src/config';
import { findResponseById } from '../src/chat/response.store';
import { listItems } from '../src/chat/conversation.store';
import { CUT_OFF, ONLY_THOUGHT } from '../src/ai/openai-chat';

/** Honest endings (docs/chat.md, "Endings"): cut answers, reasoning-only answers, stalls, failed searches, upstream errors. */

const openai = startFakeOpenAI();
const searx = startFakeSearxng();
afterAll(() => {
  openai.stop();
  searx.stop();
});
beforeEach(() => {
  openai.eventDelayMs = 0;
  searx.failStatus = 0;
});

const chatConfig = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small', searchProvider: 'searxng', searxngUrl: searx.url,
  fetchAllowPrivate: true, researchBreadth: 1, researchDepth: 1, ...extra,
});
const users = [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }];
const text = (frames: Frame[]) => frames.filter((f) => f.data.type === 'text.delta').map((f) => f.data.delta).join('');

async function setup(extra: Partial<Config> = {}) {
  const { log, lines } = captureLog();
  const ctx = await createTestContext({ users, config: chatConfig(extra), log });
  return { ctx, lines, ann: ctx.users[0]!, bob: ctx.users[1]! };
}
const chat = (ctx: TestContext, message: string, path = 'chat/stream') =>
  ctx.call(path, { message }, ctx.users[0]!).then(readFrames);

describe('chat endings', () => {
  test('finish_reason length: the text stays, the stream ends with an error saying it was cut, the row is failed', async () => {
    const { ctx } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'Once upon' }, { content: ' a time' }], finish_reason: 'length' });
    const frames = await chat(ctx, 'tell me a story');
    expect(typesOf(frames).slice(2)).toEqual(['content_part.added', 'text.delta', 'text.delta', 'error']);
    expect(frames.at(-1)!.data.message).toBe(CUT_OFF);
    const row = (await ctx.store.read((tx) => findResponseById(tx, frames[1]!.data.responseId)))!;
    expect(row.status).toBe('failed');
    expect((await ctx.store.read((tx) => listItems(tx, row.conversationId))).at(-1)).toMatchObject({ role: 'assistant', content: 'Once upon a time' });
  });

  test('reasoning and no text is not completed: the last event is an error that says so', async () => {
    const { ctx } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: '<think>Let me think about' }, { content: ' this for a while' }] });
    const frames = await chat(ctx, 'hi');
    expect(typesOf(frames).slice(2)).toEqual(['reasoning_text.delta', 'reasoning_text.delta', 'reasoning_text.done', 'error']);
    expect(frames.at(-1)!.data.message).toBe(ONLY_THOUGHT);
    expect((await ctx.store.read((tx) => findResponseById(tx, frames[1]!.data.responseId)))!.status).toBe('failed');
  });

  test('a stalled upstream hits PARLEY_AI_IDLE_TIMEOUT_S and the error names it', async () => {
    const { ctx } = await setup({ aiIdleTimeoutS: 1 });
    openai.chatScript = () => ({ deltas: [{ content: 'a' }], pauseMs: 2500 });
    const frames = await chat(ctx, 'hi');
    expect(frames.at(-1)!.data).toEqual({
      type: 'error',
      message: 'The AI provider sent nothing for 1 seconds, so Parley stopped waiting (PARLEY_AI_IDLE_TIMEOUT_S).',
    });
  });

  test("an upstream's raw text (a template traceback) goes to the log with the request id, the user gets a short message", async () => {
    const { ctx, lines } = await setup();
    const traceback = 'Jinja Exception: System message must be at the beginning. Traceback: File "<template>", line 1, in top-level template code';
    openai.chatScript = () => ({ fail: 500, message: traceback });
    const res = await ctx.call('chat/stream', { message: 'hi' }, ctx.users[0]!);
    const requestId = res.headers.get('x-request-id');
    const frames = await readFrames(res);
    const message = frames.at(-1)!.data.message as string;
    expect(message).toBe('The AI provider failed with a server error (HTTP 500).');
    expect(message).not.toContain('Jinja');
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'response failed');
    expect(logged).toMatchObject({ level: 'warn', upstream: expect.stringContaining('System message must be at the beginning') });
    expect(logged.requestId).toBe(requestId!);
  });

  test('a failed web search shows in the research stream (a reasoning note before the empty results) and is logged with the request id', async () => {
    const { ctx, lines } = await setup();
    searx.failStatus = 502;
    openai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'Report.' }] } : { deltas: [{ content: '["q"]' }] });
    const frames = await chat(ctx, 'what is new', 'chat/streamDeepResearch');
    const types = typesOf(frames);
    const at = types.indexOf('web_search.completed');
    expect(frames[at]!.data.results).toEqual([]);
    expect(frames[at - 2]!.data).toEqual({ type: 'reasoning_text.delta', delta: 'The web search failed: The search provider answered with an error.' });
    expect(types.at(-1)).toBe('done');
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'web search failed');
    expect(logged).toMatchObject({ provider: 'searxng', cause: expect.stringContaining('HTTP 502') });
    expect(typeof logged.requestId).toBe('string');
  });
});

describe('group assistant endings', () => {
  async function ask(extra: Partial<Config> = {}) {
    const { ctx, ann, bob, lines } = await setup(extra);
    const g = await groupWith(ctx, ann, [bob]);
    const s = await subscribe(ctx, bob, g.id);
    await send(ctx, ann, g.id, '@ai tell me');
    const frames: Frame[] = [];
    for (;;) {
      const f = await s.nextData(5000);
      frames.push(f);
      if (f.data.type === 'assistant.failed' || (f.data.type === 'message.created' && f.data.message.role === 'assistant')) break;
    }
    return { frames, lines };
  }

  test('a cut answer is kept, and its message.created says it was cut', async () => {
    openai.chatScript = () => ({ deltas: [{ content: 'Half an' }, { content: ' answer' }], finish_reason: 'length' });
    const { frames } = await ask();
    expect(frames.at(-1)!.data).toMatchObject({ type: 'message.created', cutOff: CUT_OFF, message: { content: 'Half an answer' } });
  });

  test('reasoning only and upstream errors fail with a short reason, never the upstream text', async () => {
    openai.chatScript = () => ({ deltas: [{ reasoning_content: 'hmm' }] });
    expect((await ask()).frames.at(-1)!.data).toMatchObject({ type: 'assistant.failed', reason: 'provider_error', message: ONLY_THOUGHT });
    openai.chatScript = () => ({ fail: 400, message: 'Jinja Exception: roles must alternate user/assistant' });
    const { frames, lines } = await ask();
    expect(frames.at(-1)!.data).toMatchObject({ type: 'assistant.failed', message: 'The AI provider refused the request (HTTP 400).' });
    expect(lines.some((l) => l.includes('roles must alternate') && l.includes('"requestId"'))).toBe(true);
  });

  test('a failed web search: assistant.web_search.completed carries the error', async () => {
    searx.failStatus = 503;
    let n = 0;
    openai.chatScript = () =>
      n++ === 0
        ? { deltas: [{ tool_calls: [{ index: 0, id: 'w1', type: 'function', function: { name: 'web_search', arguments: '{"query":"news"}' } }] }], finish_reason: 'tool_calls' }
        : { deltas: [{ content: 'No news.' }] };
    const { frames } = await ask();
    const done = frames.find((f) => f.data.type === 'assistant.web_search.completed')!;
    expect(done.data).toMatchObject({ results: [], error: 'The search provider answered with an error.' });
  });
});
