import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, until, type TestContext, type TestUser } from './helpers';
import { updateUser } from '../src/account/account.store';
import { modelList, startFakeOpenAI, toolCallsThenAnswer } from './fakes/openai';
import { startFakeAnthropic } from './fakes/anthropic';
import { startFakeEmbeddings } from './fakes/openai-embeddings';
import { v1, v1Json, V1Stream } from './support/v1';
import { QuotaError, type Usage, type UsageReport } from '../src/usage/usage.types';

/**
 * `/v1/chat/completions` and `/v1/models` through HTTP against the fake upstreams (the OpenAI-
 * compatible one passed through, Anthropic's translated): OpenAI's shapes and errors, usage
 * reported and metered, tools passed through, a caller leaving mid-stream, `store: true`.
 */

// A fresh PostgreSQL database per test takes a while on a shared machine.
setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
openai.gets['/v1/models'] = modelList(['small', 'other']);
const claude = startFakeAnthropic({ apiKey: 'sk-ant-v1' });
const embedder = startFakeEmbeddings({ dims: 4 });
afterAll(() => {
  openai.stop();
  claude.stop();
  embedder.stop();
});

/** A usage seam that records what it is told, and refuses once `refuse` is set. */
function recordingUsage() {
  const calls: { op: string; kind?: string; report?: UsageReport; apiKeyId?: string }[] = [];
  let n = 0;
  const usage: Usage & { refuse?: QuotaError; calls: typeof calls } = {
    calls,
    async reserve(caller, kind, estimate) {
      if (usage.refuse) throw usage.refuse;
      calls.push({ op: 'reserve', kind, report: typeof estimate === 'function' ? estimate() : estimate, apiKeyId: caller.apiKeyId });
      return { id: `r${++n}` };
    },
    async settle(_r, actual) {
      calls.push({ op: 'settle', report: actual });
    },
    async release() {
      calls.push({ op: 'release' });
    },
  };
  return usage;
}

async function setup(): Promise<{ ctx: TestContext; ann: TestUser; bob: TestUser; usage: ReturnType<typeof recordingUsage> }> {
  const usage = recordingUsage();
  const ctx = await createTestContext({
    users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined },
    deps: { usage },
  });
  await ctx.store.write((tx) => updateUser(tx, ctx.users[0]!.user.id, { isAdmin: true }, Date.now()));
  return { ctx, ann: ctx.users[0]!, bob: ctx.users[1]!, usage };
}

const hello = { model: 'env-ai/small', messages: [{ role: 'user', content: 'Hi there' }] };
const lastChat = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').at(-1)!.body;

describe('/v1 models and keys', () => {
  test('GET /v1/models lists the catalogue with a Bearer API key or x-api-key, in OpenAI shape', async () => {
    const { ctx, ann } = await setup();
    const { status, body } = await v1Json(ctx, 'GET', '/v1/models', undefined, ann);
    expect(status).toBe(200);
    expect(body.object).toBe('list');
    expect(body.data.map((m: any) => m.id)).toEqual(['env-ai/small', 'env-ai/other']);
    expect(body.data[0]).toEqual({ id: 'env-ai/small', object: 'model', created: expect.any(Number), owned_by: 'env-ai' });
    expect((await v1Json(ctx, 'GET', '/v1/models', undefined, { 'x-api-key': ann.key })).status).toBe(200);
    const one = await v1Json(ctx, 'GET', '/v1/models/env-ai/other', undefined, ann);
    expect(one.body.id).toBe('env-ai/other');
  });

  test('a wrong key, a session token or none: 401 invalid_api_key in OpenAI shape', async () => {
    const { ctx, ann } = await setup();
    const bad: Record<string, string>[] = [{}, { authorization: 'Bearer pk_nope' }, { authorization: `Bearer ${ann.token}` }, { 'x-api-key': 'pk_nope' }];
    for (const headers of bad) {
      const { status, body } = await v1Json(ctx, 'POST', '/v1/chat/completions', hello, headers);
      expect(status).toBe(401);
      expect(body).toEqual({ error: { message: expect.stringContaining('API key'), type: 'invalid_request_error', code: 'invalid_api_key', param: null } });
    }
  });

  test('an unknown path or method under /v1 is answered in OpenAI shape', async () => {
    const { ctx, ann } = await setup();
    const missing = await v1Json(ctx, 'GET', '/v1/nothing', undefined, ann);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'invalid_request_error', message: 'Invalid URL (GET /v1/nothing).' });
    const wrong = await v1Json(ctx, 'GET', '/v1/chat/completions', undefined, ann);
    expect(wrong.status).toBe(405);
    expect(wrong.res.headers.get('allow')).toBe('POST');
    expect(wrong.body.error.type).toBe('invalid_request_error');
  });
});

describe('/v1/chat/completions on an OpenAI-compatible connection', () => {
  test('not streamed: the upstream answer with the catalogue id, the request passed through, usage metered', async () => {
    const { ctx, ann, usage } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'Hello' }, { content: ' you.' }] });
    const { status, body } = await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, temperature: 0.2, top_p: 0.9, seed: 7, stop: ['\n\n'], max_tokens: 50, top_k: 40, user: 'u1' }, ann);
    expect(status).toBe(200);
    expect(body).toMatchObject({ object: 'chat.completion', model: 'env-ai/small', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello you.' }, finish_reason: 'stop' }] });
    expect(body.usage.completion_tokens).toBe(2);
    const sent = lastChat();
    expect(sent).toMatchObject({ model: 'small', stream: false, temperature: 0.2, top_p: 0.9, seed: 7, stop: ['\n\n'], max_tokens: 50, top_k: 40, user: 'u1', messages: hello.messages });
    expect(sent.store).toBeUndefined();
    expect(usage.calls.map((c) => c.op)).toEqual(['reserve', 'settle']);
    expect(usage.calls[0]).toMatchObject({ kind: 'v1', apiKeyId: ann.keyId, report: { model: 'env-ai/small', estimated: true } });
    expect(usage.calls[1]!.report).toMatchObject({ model: 'env-ai/small', inputTokens: body.usage.prompt_tokens, outputTokens: 2, estimated: false });
  });

  test('streamed: chat.completion.chunk frames then [DONE]; the usage chunk only when asked, metered either way', async () => {
    const { ctx, ann, usage } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'One' }, { content: ' two' }, { content: ' three' }] });
    const plain = await new V1Stream(await v1(ctx, 'POST', '/v1/chat/completions', { ...hello, stream: true }, ann)).all();
    expect(lastChat().stream_options).toEqual({ include_usage: true });
    expect(plain.at(-1)!.data).toBe('[DONE]');
    const chunks = plain.slice(0, -1).map((f) => f.data);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'env-ai/small')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('One two three');
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(usage.calls.at(-1)).toMatchObject({ op: 'settle', report: { outputTokens: 3, estimated: false } });

    const asked = await new V1Stream(await v1(ctx, 'POST', '/v1/chat/completions', { ...hello, stream: true, stream_options: { include_usage: true } }, ann)).all();
    const last = asked.at(-2)!.data;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 3, prompt_tokens: expect.any(Number) });
  });

  test('the caller\'s tools and tool_choice pass through; the tool calls come back for the client to run', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = toolCallsThenAnswer([{ id: 'call_a', name: 'get_weather', args: { city: 'Oslo' } }], 'It is sunny.');
    const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const first = await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, tools, tool_choice: 'required', parallel_tool_calls: false, response_format: { type: 'json_object' } }, ann);
    expect(lastChat()).toMatchObject({ tools, tool_choice: 'required', parallel_tool_calls: false, response_format: { type: 'json_object' } });
    const message = first.body.choices[0].message;
    expect(first.body.choices[0].finish_reason).toBe('tool_calls');
    expect(message.tool_calls).toEqual([{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]);
    const second = await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, tools, messages: [...hello.messages, message, { role: 'tool', tool_call_id: 'call_a', content: 'sunny' }] }, ann);
    expect(second.body.choices[0].message.content).toBe('It is sunny.');
    expect(lastChat().messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_a', content: 'sunny' });
  });

  test('n other than 1, a missing model, a LAN image: 400 naming the parameter; an unknown model: 404 model_not_found', async () => {
    const { ctx, ann } = await setup();
    const n = await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, n: 2 }, ann);
    expect(n.status).toBe(400);
    expect(n.body.error).toMatchObject({ type: 'invalid_request_error', param: 'n', code: 'unsupported_value', message: expect.stringContaining('n must be 1') });
    expect((await v1Json(ctx, 'POST', '/v1/chat/completions', { messages: hello.messages }, ann)).body.error.param).toBe('model');
    const image = await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://192.168.1.1/x.png' } }] }] }, ann);
    expect(image.status).toBe(400);
    expect(image.body.error.param).toBe('messages[0].content[0].image_url.url');
    const unknown = await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, model: 'env-ai/nope' }, ann);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
  });

  test('an image the policy allows reaches the upstream as sent', async () => {
    const { ctx, ann } = await setup();
    const url = 'data:image/png;base64,iVBORw0KGgo=';
    const content = [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url, detail: 'low' } }];
    expect((await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, messages: [{ role: 'user', content }] }, ann)).status).toBe(200);
    expect(lastChat().messages[0].content).toEqual(content);
  });

  test('a quota refused before anything goes upstream: 429 insufficient_quota with Retry-After', async () => {
    const { ctx, ann, usage } = await setup();
    const before = openai.requests.length;
    usage.refuse = new QuotaError('You have used your 100,000 tokens of this month; they reset on 1 July.', 'tokens', ctx.deps.now() + 90_000);
    const { status, body, res } = await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, stream: true }, ann);
    expect(status).toBe(429);
    expect(body).toEqual({ error: { message: 'You have used your 100,000 tokens of this month; they reset on 1 July.', type: 'insufficient_quota', code: 'insufficient_quota', param: null } });
    expect(res.headers.get('retry-after')).toBe('90');
    expect(openai.requests.length).toBe(before);
  });

  test('an upstream refusal is the caller\'s error with its status, and nothing is metered', async () => {
    const { ctx, ann, usage } = await setup();
    openai.chatScript = () => ({ fail: 500, message: 'tools param requires --jinja flag' });
    const { status, body } = await v1Json(ctx, 'POST', '/v1/chat/completions', { ...hello, stream: true }, ann);
    expect(status).toBe(502);
    expect(body.error).toMatchObject({ type: 'server_error', message: 'The AI provider failed with a server error (HTTP 500): tools param requires --jinja flag' });
    expect(usage.calls.map((c) => c.op)).toEqual(['reserve', 'release']);
    openai.chatScript = () => ({ fail: 400, message: 'bad stop' });
    expect((await v1Json(ctx, 'POST', '/v1/chat/completions', hello, ann)).body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('bad stop') });
  });

  test('a caller that leaves mid-stream stops the upstream request, and what it used is settled', async () => {
    const { ctx, ann, usage } = await setup();
    openai.chatScript = () => ({ deltas: Array.from({ length: 200 }, (_, i) => ({ content: `w${i} ` })) });
    openai.eventDelayMs = 20;
    try {
      const aborted = openai.aborted;
      const leave = new AbortController();
      const stream = new V1Stream(await v1(ctx, 'POST', '/v1/chat/completions', { ...hello, stream: true }, ann, leave.signal));
      await stream.next();
      await stream.next();
      leave.abort();
      await stream.cancel().catch(() => undefined);
      await until(() => openai.aborted > aborted, 'the upstream saw the abort');
      await until(() => usage.calls.at(-1)?.op === 'settle', 'the usage settled');
      expect(usage.calls.at(-1)!.report!.estimated).toBe(true);
    } finally {
      openai.eventDelayMs = 0;
    }
  });

  test('a stream gone quiet carries a keepalive comment once a whole heartbeat tick passed without a chunk', async () => {
    const ctx = await createTestContext({
      users: [{ email: 'ann@example.org' }],
      config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined, sseHeartbeatSeconds: 1 },
    });
    // The model says a word, then nothing (until the caller leaves).
    openai.chatScript = () => ({ deltas: [{ content: 'Thinking' }], hangAfter: 1 });
    const stream = new V1Stream(await v1(ctx, 'POST', '/v1/chat/completions', { ...hello, stream: true }, ctx.users[0]));
    expect((await stream.next())!.data.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect((await stream.next())!.data.choices[0].delta).toEqual({ content: 'Thinking' });
    const quietSince = Date.now();
    const reading = stream.next();
    await until(() => stream.text.includes(': keepalive\n\n'), 'a keepalive', 4000);
    // Between one and two ticks: the tick that finds the stream quiet since the one before.
    expect(Date.now() - quietSince).toBeGreaterThanOrEqual(900);
    await stream.cancel().catch(() => undefined);
    await reading.catch(() => undefined);
  });

  test('store: true keeps the exchange as a conversation of the caller; by default nothing is kept', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'Kept answer.' }] });
    await v1Json(ctx, 'POST', '/v1/chat/completions', hello, ann);
    expect((await ctx.json('chat/listConversations', {}, ann)).body.conversations).toEqual([]);
    const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'First question\nmore' }, { role: 'assistant', content: 'First answer' }, { role: 'user', content: 'Second' }];
    await v1Json(ctx, 'POST', '/v1/chat/completions', { model: 'env-ai/small', messages, store: true, stream: true }, ann).catch(() => undefined);
    await until(async () => (await ctx.json('chat/listConversations', {}, ann)).body.conversations.length === 1, 'the conversation is kept');
    const [conversation] = (await ctx.json('chat/listConversations', {}, ann)).body.conversations;
    expect(conversation.title).toBe('First question');
    const items = (await ctx.json('chat/getConversation', { conversationId: conversation.id }, ann)).body.items;
    expect(items.map((i: any) => [i.role, i.content])).toEqual([
      ['user', 'First question\nmore'],
      ['assistant', 'First answer'],
      ['user', 'Second'],
      ['assistant', 'Kept answer.'],
    ]);
    expect(items.at(-1).parts).toEqual([{ type: 'response.model', model: 'env-ai/small' }]);
  });
});

describe('/v1/chat/completions on an Anthropic connection', () => {
  async function withClaude() {
    const s = await setup();
    const added = await s.ctx.json('admin/addConnection', { name: 'claude', kind: 'chat', api: 'anthropic', baseUrl: claude.url, credential: claude.apiKey, options: { model: 'claude-sonnet-4-6' } }, s.ann);
    expect(added.status).toBe(200);
    return s;
  }

  test('streamed and whole: the Messages API translated both ways, with its usage', async () => {
    const { ctx, ann, usage } = await withClaude();
    claude.script = () => ({ blocks: [{ type: 'text', text: 'Bonjour from Claude.' }], usage: { input: 12, output: 5, cacheRead: 3 } });
    const whole = await v1Json(ctx, 'POST', '/v1/chat/completions', { model: 'claude/claude-sonnet-4-6', messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'Hi' }], max_tokens: 100, stop: 'END' }, ann);
    expect(whole.status).toBe(200);
    expect(whole.body).toMatchObject({ object: 'chat.completion', model: 'claude/claude-sonnet-4-6', choices: [{ message: { role: 'assistant', content: 'Bonjour from Claude.' }, finish_reason: 'stop' }] });
    expect(whole.body.usage).toMatchObject({ prompt_tokens: 15, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 3 } });
    const sent = claude.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'claude-sonnet-4-6', max_tokens: 100, system: 'Be kind.', stop_sequences: ['END'], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] });
    expect(sent.headers['x-api-key']).toBe(claude.apiKey);
    expect(usage.calls.at(-1)!.report).toMatchObject({ inputTokens: 15, outputTokens: 5, cachedTokens: 3, estimated: false });

    const frames = await new V1Stream(await v1(ctx, 'POST', '/v1/chat/completions', { model: 'claude/claude-sonnet-4-6', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } }, ann)).all();
    expect(frames.at(-1)!.data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => f.data);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Bonjour from Claude.');
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 15, completion_tokens: 5 });
  });

  test('tools round trip: tool_use comes back as tool_calls, the tool result goes back as tool_result', async () => {
    const { ctx, ann } = await withClaude();
    const answered = (body: any) => body.messages.some((m: any) => m.content.some((b: any) => b.type === 'tool_result'));
    claude.script = (body) =>
      answered(body) ? { blocks: [{ type: 'text', text: 'Found it.' }] } : { blocks: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }], stopReason: 'tool_use' };
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
    const first = await v1Json(ctx, 'POST', '/v1/chat/completions', { model: 'claude/claude-sonnet-4-6', messages: [{ role: 'user', content: 'Find x' }], tools, tool_choice: 'auto' }, ann);
    expect(first.body.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] } });
    expect(claude.requests.at(-1)!.body.tools).toEqual([{ name: 'lookup', input_schema: tools[0]!.function.parameters }]);
    const messages = [{ role: 'user', content: 'Find x' }, first.body.choices[0].message, { role: 'tool', tool_call_id: 'toolu_1', content: 'x is here' }];
    const second = await v1Json(ctx, 'POST', '/v1/chat/completions', { model: 'claude/claude-sonnet-4-6', messages, tools }, ann);
    expect(second.body.choices[0].message.content).toBe('Found it.');
    expect(claude.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Find x' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x is here' }] },
    ]);
  });
});

describe('/v1/embeddings', () => {
  test('through the embeddings connection: its model swapped in, the vectors as the server gave them, its tokens metered; another model 404', async () => {
    const usage = recordingUsage();
    const ctx = await createTestContext({
      users: [{ email: 'ann@example.org' }],
      config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined, embeddingsBaseUrl: embedder.url, embeddingsModel: 'embed-small' },
      deps: { usage },
    });
    const ann = ctx.users[0]!;
    const model = (await v1Json(ctx, 'GET', '/v1/models', undefined, ann)).body.data.map((m: any) => m.id).find((id: string) => id.includes('embed-small'));
    const { status, body } = await v1Json(ctx, 'POST', '/v1/embeddings', { model, input: ['a red car', 'a blue car'] }, ann);
    expect(status).toBe(200);
    expect(body).toMatchObject({ object: 'list', model, usage: { prompt_tokens: expect.any(Number) } });
    expect(body.data.map((d: any) => d.embedding.length)).toEqual([4, 4]);
    expect(embedder.requests.at(-1)!).toMatchObject({ model: 'embed-small', input: ['a red car', 'a blue car'] });
    expect(usage.calls.map((c) => c.op)).toEqual(['reserve', 'settle']);
    expect(usage.calls[0]!.kind).toBe('embeddings');
    expect(usage.calls[1]!.report).toMatchObject({ model, inputTokens: body.usage.prompt_tokens, estimated: false });
    const other = await v1Json(ctx, 'POST', '/v1/embeddings', { model: 'text-embedding-3-large', input: 'x' }, ann);
    expect(other.status).toBe(404);
    expect(other.body.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found' });
    const empty = await v1Json(ctx, 'POST', '/v1/embeddings', { model, input: [] }, ann);
    expect(empty.body.error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
  });
});
