/**
 * Issue 18 items 5 and 8, through HTTP on a real database: what a Chat Completions server accepts
 * (tools, images) is configured, read from llama-server's /props, or learned from its first
 * refusal and remembered; and everyday chat may search the web.
 */
import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { createTestContext, type TestContext } from './helpers';
import { readFrames, typesOf, type Frame } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import { startFakeSearxng } from './fakes/searxng';
import type { Config } from '../src/config';
import { IMAGE_NOT_SENT } from '../src/ai/openai-chat';
import { probeCapabilities } from '../src/ops/probe-capabilities';

const openai = startFakeOpenAI();
const searx = startFakeSearxng();
afterAll(() => {
  openai.stop();
  searx.stop();
});

/** llama-server's own refusals (no `--jinja`; no `--mmproj`). */
const NO_TOOLS = { fail: 500, message: 'tools param requires --jinja flag' };
const NO_IMAGES = { fail: 500, message: 'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj' };
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const hasImage = (body: any) => JSON.stringify(body.messages).includes('image_url');
const hasTools = (body: any) => Array.isArray(body.tools) && body.tools.length > 0;
/** What each request carried, runs of the same collapsed (the OpenAI SDK itself retries a 500 once). */
const changes = (xs: boolean[]) => xs.filter((x, i) => i === 0 || x !== xs[i - 1]);
const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const answer = (frames: Frame[]) => frames.filter((f) => f.data.type === 'text.delta').map((f) => f.data.delta).join('');

async function context(extra: Partial<Config> = {}): Promise<TestContext> {
  return await createTestContext({
    users: [{ email: 'ann@example.org' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small', fetchAllowPrivate: true, researchBreadth: 1, researchDepth: 1, ...extra },
  });
}
const stream = (ctx: TestContext, body: unknown, path = 'chat/stream') => ctx.call(path, body, ctx.users[0]).then(readFrames);

beforeEach(() => {
  openai.requests.length = 0;
  openai.props = undefined;
});

describe('capabilities: tools', () => {
  test('auto: a server that refuses tools gets the turn again without them, and no later turn offers them', async () => {
    const ctx = await context();
    openai.chatScript = (body) => (hasTools(body) ? NO_TOOLS : { deltas: [{ content: 'Plain answer.' }] });
    const first = await stream(ctx, { message: 'Hi' });
    expect(typesOf(first).at(-1)).toBe('done');
    expect(answer(first)).toBe('Plain answer.');
    expect(changes(chatRequests().map(hasTools))).toEqual([true, false]);
    const conversationId = first[0]!.data.conversationId;
    expect(answer(await stream(ctx, { message: 'Again', conversationId }))).toBe('Plain answer.');
    const seen = chatRequests().map(hasTools);
    expect(seen.at(-1)).toBe(false);
    expect(changes(seen)).toEqual([true, false]);
  });

  test('auto: deep research still writes its report on a server that refuses tools', async () => {
    const ctx = await context();
    openai.chatScript = (body) => (hasTools(body) ? NO_TOOLS : body.stream ? { deltas: [{ content: 'Report.' }] } : { deltas: [{ content: '["q"]' }] });
    const frames = await stream(ctx, { message: 'Research cats' }, 'chat/streamDeepResearch');
    expect(typesOf(frames).at(-1)).toBe('done');
    expect(answer(frames)).toBe('Report.');
  });

  test("llama-server's /props saying the template renders no tools: tools are still sent (llama-server takes them through its generic format)", async () => {
    const ctx = await context();
    openai.props = { chat_template_caps: { supports_tools: false }, modalities: { vision: true } };
    openai.chatScript = () => ({ deltas: [{ content: 'ok' }] });
    expect(typesOf(await stream(ctx, { message: 'Hi', images: [{ imageUrl: PIXEL }] })).at(-1)).toBe('done');
    expect(chatRequests().map(hasTools)).toEqual([true]);
    expect(chatRequests().map(hasImage)).toEqual([true]);
  });

  test('on: a refusal is the turn’s error (no retry); off: no tools at all', async () => {
    openai.chatScript = (body) => (hasTools(body) ? NO_TOOLS : { deltas: [{ content: 'ok' }] });
    const on = await stream(await context({ aiTools: 'on' }), { message: 'Hi' });
    expect(typesOf(on).at(-1)).toBe('error');
    expect(changes(chatRequests().map(hasTools))).toEqual([true]);
    openai.requests.length = 0;
    expect(typesOf(await stream(await context({ aiTools: 'off' }), { message: 'Hi' })).at(-1)).toBe('done');
    expect(chatRequests().map(hasTools)).toEqual([false]);
  });
});

describe('capabilities: images', () => {
  test('auto: a refused image is left out of that turn (the answer says so) and of every later one, which keep working', async () => {
    const ctx = await context();
    openai.chatScript = (body) => (hasImage(body) ? NO_IMAGES : { deltas: [{ content: 'A story.' }] });
    const first = await stream(ctx, { message: 'What is this?', images: [{ imageUrl: PIXEL }] });
    expect(typesOf(first)).toEqual(['conversation.created', 'response.created', 'content_part.added', 'text.delta', 'text.delta', 'done']);
    expect(answer(first)).toBe(`*${IMAGE_NOT_SENT}*\n\nA story.`);
    // The model is told too, in the message that carried the image.
    expect(JSON.stringify(chatRequests().at(-1).messages)).toContain(IMAGE_NOT_SENT);
    const conversationId = first[0]!.data.conversationId;
    const next = await stream(ctx, { message: 'And then?', conversationId });
    expect(typesOf(next).at(-1)).toBe('done');
    expect(answer(next)).toBe('A story.');
    expect(changes(chatRequests().map(hasImage))).toEqual([true, false]);
  });

  test("off, or /props saying the model has no vision: images are never sent, and the user hears so", async () => {
    openai.chatScript = () => ({ deltas: [{ content: 'ok' }] });
    const off = await stream(await context({ aiVision: 'off' }), { message: 'Look', images: [{ imageUrl: PIXEL }] });
    expect(answer(off)).toBe(`*${IMAGE_NOT_SENT}*\n\nok`);
    openai.props = { chat_template_caps: { supports_tools: true }, modalities: { vision: false } };
    const props = await stream(await context(), { message: 'Look', images: [{ imageUrl: PIXEL }] });
    expect(answer(props)).toBe(`*${IMAGE_NOT_SENT}*\n\nok`);
    expect(chatRequests().map(hasImage)).toEqual([false, false]);
    expect(chatRequests().map(hasTools)).toEqual([true, true]);
  });
});

describe('capabilities: the tool role', () => {
  /** Gemma 2's template as llama-server reports it: a `tool` message breaks its strict alternation. */
  const NO_TOOL_ROLE = { fail: 400, message: 'Jinja Exception: Conversation roles must alternate user/assistant/user/assistant/...' };
  const hasToolRole = (body: any) => body.messages.some((m: any) => m.role === 'tool' || m.tool_calls);
  /** A template without a tool role: refuses `tool` messages, answers a tool's output sent as a user turn, otherwise calls search_history. */
  const gemma2 = (body: any) =>
    hasToolRole(body)
      ? NO_TOOL_ROLE
      : String(body.messages.at(-1).content).startsWith('[Output of the tool search_history')
        ? { deltas: [{ content: 'By the lake.' }] }
        : { deltas: [{ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'search_history', arguments: '{"query":"picnic"}' } }] }], finish_reason: 'tool_calls' as const };

  test('auto: a refused tool result is sent again as a marked user turn, and every later tool round goes that way at once', async () => {
    const ctx = await context();
    await stream(ctx, { message: 'Our picnic is by the lake.' });
    openai.requests.length = 0;
    openai.chatScript = gemma2;
    const first = await stream(ctx, { message: 'Where is our picnic?' });
    expect(typesOf(first)).toEqual(['conversation.created', 'response.created', 'history.in_progress', 'history.completed', 'content_part.added', 'text.delta', 'done']);
    expect(answer(first)).toBe('By the lake.');
    // The call, the refused round with a tool message, the same round again without the tool role.
    expect(chatRequests().map(hasToolRole)).toEqual([false, true, false]);
    const retried = chatRequests().at(-1).messages;
    expect(retried.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(retried[2].content).toBe('[Called the tool search_history with {"query":"picnic"}]');
    expect(retried[3].content).toStartWith('[Output of the tool search_history, not written by the user]\n(1) Our picnic is by the lake.');
    // Tools are still offered: only the roles changed.
    expect(chatRequests().every(hasTools)).toBe(true);

    openai.requests.length = 0;
    const next = await stream(ctx, { message: 'And where is it?', conversationId: first[0]!.data.conversationId });
    expect(typesOf(next).at(-1)).toBe('done');
    expect(chatRequests().map(hasToolRole)).toEqual([false, false]);
  });

  test('a server that takes the tool role keeps getting it; a refusal not about roles is the turn’s error', async () => {
    const ctx = await context();
    openai.chatScript = (body) =>
      body.messages.at(-1).role === 'tool'
        ? { deltas: [{ content: 'Nothing there.' }] }
        : { deltas: [{ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'search_history', arguments: '{"query":"x"}' } }] }], finish_reason: 'tool_calls' };
    expect(answer(await stream(ctx, { message: 'Find x' }))).toBe('Nothing there.');
    expect(chatRequests().map(hasToolRole)).toEqual([false, true]);
    openai.requests.length = 0;
    openai.chatScript = (body) =>
      hasToolRole(body)
        ? { fail: 400, message: 'Bad request: the prompt is malformed' }
        : { deltas: [{ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'search_history', arguments: '{"query":"x"}' } }] }], finish_reason: 'tool_calls' };
    const refused = await stream(ctx, { message: 'Find x again' });
    expect(typesOf(refused).at(-1)).toBe('error');
    expect(chatRequests().map(hasToolRole)).toEqual([false, true]);
  });
});

describe('web search in everyday chat (item 8)', () => {
  test('with a search provider, chat/stream offers web_search and relays its events', async () => {
    const ctx = await context({ searchProvider: 'searxng', searxngUrl: searx.url });
    openai.chatScript = (body) =>
      body.messages.at(-1).role === 'tool'
        ? { deltas: [{ content: 'Found it.' }] }
        : { deltas: [{ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'web_search', arguments: '{"query":"tides"}' } }] }], finish_reason: 'tool_calls' };
    const frames = await stream(ctx, { message: 'Why tides?' });
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'web_search.in_progress', 'web_search.completed', 'content_part.added', 'text.delta', 'done']);
    expect(frames[2]!.data).toMatchObject({ query: 'tides', numResults: 5 });
    expect(frames[3]!.data.results[0]).toMatchObject({ title: 'tides — result 1' });
    expect(chatRequests()[0].tools.map((t: any) => t.function.name)).toContain('web_search');
    // The results stay with the answer, as research's do.
    const { body } = await ctx.json('chat/getConversation', { conversationId: frames[0]!.data.conversationId }, ctx.users[0]);
    expect(body.items.at(-1).parts.map((p: any) => p.type)).toEqual(['web_search.completed', 'response.model']);
  });

  test('without a search provider, no web_search is offered', async () => {
    openai.chatScript = () => ({ deltas: [{ content: 'ok' }] });
    await stream(await context(), { message: 'Hi' });
    expect(chatRequests()[0].tools.map((t: any) => t.function.name)).not.toContain('web_search');
  });
});

describe('parley doctor: what the server accepts', () => {
  const target = (settings: { tools?: 'auto' | 'on' | 'off'; images?: 'auto' | 'on' | 'off' } = {}) => ({
    provider: 'openai-chat',
    baseUrl: openai.url,
    model: 'small',
    settings: { tools: settings.tools ?? 'auto', images: settings.images ?? 'auto' },
  });

  test('one probe with a tool and one with a 1×1 image; a refusal warns on auto and fails on on', async () => {
    openai.chatScript = (body) => (hasImage(body) ? NO_IMAGES : { deltas: [{ content: 'OK' }] });
    const auto = await probeCapabilities(target());
    expect(auto).toMatchObject({ name: 'AI capabilities', status: 'warn' });
    expect(auto.detail).toBe('tools: accepted, images: refused (HTTP 500: image input is not supported - hint: if this is unexpected, you may need to provide the mmproj); Parley leaves them out (auto)');
    expect(auto.fix).toContain('--mmproj');
    expect(chatRequests().every((b) => b.max_tokens === 1)).toBe(true);
    expect(await probeCapabilities(target({ images: 'on' }))).toMatchObject({ status: 'fail' });
    expect(await probeCapabilities(target({ images: 'off' }))).toMatchObject({ status: 'ok', detail: 'tools: accepted' });
    expect((await probeCapabilities({ ...target(), provider: 'openai-responses' })).status).toBe('skip');
  });

  test("llama-server's /props: no vision counts though the request passed; a template that renders no tools does not (the request decides)", async () => {
    openai.chatScript = () => ({ deltas: [{ content: 'OK' }] });
    openai.props = { chat_template_caps: { supports_tools: false }, modalities: { vision: false } };
    const check = await probeCapabilities(target());
    expect(check).toMatchObject({ status: 'warn', detail: 'tools: accepted, images: not supported (/props: no vision); Parley leaves them out (auto)' });
    expect(check.fix).toContain('--mmproj');
  });
});
