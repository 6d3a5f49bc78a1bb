import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, until, type TestContext, type TestUser } from './helpers';
import { modelList, startFakeOpenAI, toolCallsThenAnswer } from './fakes/openai';
import { v1, v1Json, V1Stream, type V1Frame } from './support/v1';
import { endInterruptedApiResponses, RESTART_MESSAGE } from '../src/openai-compat/background-responses';
import { apiEventLog } from '../src/openai-compat/api-events';
import { pruneExpired } from '../src/tasks/prune-expired';
import { sql } from 'drizzle-orm';
import { HOUR_MS, DAY_MS } from '../src/time';

/**
 * `/v1/responses` through HTTP against the fake OpenAI-compatible upstream: whole, streamed
 * (OpenAI's events with their sequence numbers), function tools, background responses followed,
 * left, resumed with `starting_after`, cancelled, and after a restart; `store: true` with
 * `previous_response_id`. On SQLite and PostgreSQL.
 */

// A fresh PostgreSQL database per test takes a while on a shared machine.
setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
openai.gets['/v1/models'] = modelList(['small']);
afterAll(() => openai.stop());

const config = { aiProvider: 'openai-chat' as const, aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined };

async function setup(opts: { durable?: boolean } = {}): Promise<{ ctx: TestContext; ann: TestUser; bob: TestUser }> {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config, durable: opts.durable });
  return { ctx, ann: ctx.users[0]!, bob: ctx.users[1]!, };
}

const lastChat = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').at(-1)!.body;
const slowAnswer = (n: number) => () => ({ deltas: Array.from({ length: n }, (_, i) => ({ content: `w${i} ` })) });
const textOf = (frames: V1Frame[]) => frames.filter((f) => f.data.type === 'response.output_text.delta').map((f) => f.data.delta).join('');
const seqs = (frames: V1Frame[]) => frames.map((f) => f.data.sequence_number);
const count = (n: number, from = 0) => Array.from({ length: n }, (_, i) => i + from);

describe('/v1/responses', () => {
  test('whole: a completed response object with its message, usage and the settings echoed; nothing kept', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'Hello' }, { content: ' there.' }] });
    const { status, body } = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'Hi', instructions: 'Be brief.', max_output_tokens: 40, temperature: 0.5, metadata: { a: 'b' } }, ann);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'env-ai/small',
      instructions: 'Be brief.',
      max_output_tokens: 40,
      temperature: 0.5,
      metadata: { a: 'b' },
      background: false,
      store: false,
      output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello there.', annotations: [] }] }],
      usage: { output_tokens: 2, input_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    expect(body.id).toMatch(/^resp_/);
    expect(lastChat()).toMatchObject({ model: 'small', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], max_tokens: 40, temperature: 0.5 });
    expect((await v1Json(ctx, 'GET', `/v1/responses/${body.id}`, undefined, ann)).status).toBe(404);
    expect((await ctx.json('chat/listConversations', {}, ann)).body.conversations).toEqual([]);
  });

  test('streamed: OpenAI\'s events in order, named, numbered from 0 without a gap', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = () => ({ deltas: [{ reasoning_content: 'Think.' }, { content: 'A' }, { content: 'B' }] });
    const frames = await new V1Stream(await v1(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }], stream: true }, ann)).all();
    expect(frames.every((f) => f.event === f.data.type)).toBe(true);
    expect(frames.map((f) => f.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(seqs(frames)).toEqual(count(frames.length));
    const done = frames.at(-1)!.data.response;
    expect(done.output.map((i: any) => i.type)).toEqual(['reasoning', 'message']);
    expect(done.output[1].content[0].text).toBe('AB');
    expect(done.usage.output_tokens).toBe(3);
  });

  test('function tools: a call comes back as a function_call item; its output goes back with the call before it', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = toolCallsThenAnswer([{ id: 'call_w', name: 'weather', args: { city: 'Oslo' } }], 'Sunny.');
    const tools = [{ type: 'function', name: 'weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    const first = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'Weather in Oslo?', tools, tool_choice: 'auto' }, ann);
    expect(lastChat().tools).toEqual([{ type: 'function', function: { name: 'weather', description: 'The weather', parameters: tools[0]!.parameters } }]);
    const call = first.body.output[0];
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_w', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' });
    const second = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', tools, input: [{ role: 'user', content: 'Weather in Oslo?' }, call, { type: 'function_call_output', call_id: 'call_w', output: 'sunny' }] }, ann);
    expect(second.body.output[0].content[0].text).toBe('Sunny.');
    expect(lastChat().messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_w', content: 'sunny' },
    ]);
  });

  test('a built-in tool, a file input: 400 saying what is supported', async () => {
    const { ctx, ann } = await setup();
    const tool = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'x', tools: [{ type: 'web_search' }] }, ann);
    expect(tool.status).toBe(400);
    expect(tool.body.error).toMatchObject({ param: 'tools[0].type', message: expect.stringContaining('function tools') });
    const file = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, ann);
    expect(file.body.error.param).toBe('input[0].content[0].type');
  });

  test('store: true keeps a conversation that previous_response_id continues', async () => {
    const { ctx, ann, bob } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'Paris.' }] });
    const first = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'Capital of France?', store: true }, ann);
    expect(first.body.store).toBe(true);
    expect((await v1Json(ctx, 'GET', `/v1/responses/${first.body.id}`, undefined, ann)).body.status).toBe('completed');
    expect((await v1Json(ctx, 'GET', `/v1/responses/${first.body.id}`, undefined, bob)).status).toBe(404);
    openai.chatScript = () => ({ deltas: [{ content: 'Berlin.' }] });
    const second = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'And Germany?', previous_response_id: first.body.id, store: true }, ann);
    expect(second.status).toBe(200);
    expect(lastChat().messages).toEqual([
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris.' },
      { role: 'user', content: 'And Germany?' },
    ]);
    const conversations = (await ctx.json('chat/listConversations', {}, ann)).body.conversations;
    expect(conversations.map((c: any) => c.title)).toEqual(['Capital of France?']);
    const items = (await ctx.json('chat/getConversation', { conversationId: conversations[0].id }, ann)).body.items;
    expect(items.map((i: any) => i.content)).toEqual(['Capital of France?', 'Paris.', 'And Germany?', 'Berlin.']);
    const other = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'x', previous_response_id: first.body.id }, bob);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('previous_response_not_found');
  });
});

describe('/v1/responses in the background', () => {
  test('created queued, then retrieved completed; its stream replayed from any sequence number', async () => {
    const { ctx, ann, bob } = await setup();
    openai.chatScript = () => ({ deltas: [{ content: 'Done ' }, { content: 'here.' }] });
    const { body } = await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'Go', background: true }, ann);
    expect(body).toMatchObject({ status: 'queued', background: true });
    await until(async () => (await v1Json(ctx, 'GET', `/v1/responses/${body.id}`, undefined, ann)).body.status === 'completed', 'the response completes');
    const done = (await v1Json(ctx, 'GET', `/v1/responses/${body.id}`, undefined, ann)).body;
    expect(done.output[0].content[0].text).toBe('Done here.');
    const all = await new V1Stream(await v1(ctx, 'GET', `/v1/responses/${body.id}?stream=true`, undefined, ann)).all();
    expect(all[0]!.data).toMatchObject({ type: 'response.created', sequence_number: 0, response: { status: 'queued' } });
    expect(all.at(-1)!.data.type).toBe('response.completed');
    expect(seqs(all)).toEqual(count(all.length));
    const after = await new V1Stream(await v1(ctx, 'GET', `/v1/responses/${body.id}?stream=true&starting_after=4`, undefined, ann)).all();
    expect(seqs(after)).toEqual(count(all.length - 5, 5));
    expect((await v1Json(ctx, 'GET', `/v1/responses/${body.id}?stream=true`, undefined, bob)).status).toBe(404);
  });

  test('a caller that leaves keeps it running; coming back with starting_after gets the rest exactly once', async () => {
    const { ctx, ann } = await setup();
    openai.chatScript = slowAnswer(60);
    openai.eventDelayMs = 5;
    try {
      const aborted = openai.aborted;
      const leave = new AbortController();
      const stream = new V1Stream(await v1(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'Go', background: true, stream: true }, ann, leave.signal));
      const head: V1Frame[] = [];
      while (head.length < 6) head.push((await stream.next())!);
      leave.abort();
      await stream.cancel().catch(() => undefined);
      const id = head[0]!.data.response.id;
      const last = head.at(-1)!.data.sequence_number;
      const rest = await new V1Stream(await v1(ctx, 'GET', `/v1/responses/${id}?stream=true&starting_after=${last}`, undefined, ann)).all();
      const all = [...head, ...rest];
      expect(seqs(all)).toEqual(count(all.length));
      expect(all.at(-1)!.data.type).toBe('response.completed');
      expect(textOf(all)).toBe(Array.from({ length: 60 }, (_, i) => `w${i} `).join(''));
      expect(openai.aborted).toBe(aborted);
    } finally {
      openai.eventDelayMs = 0;
    }
  });

  test('cancel stops it upstream; its stream ends with an error event, its status cancelled', async () => {
    const { ctx, ann, bob } = await setup();
    openai.chatScript = slowAnswer(400);
    openai.eventDelayMs = 5;
    try {
      const aborted = openai.aborted;
      const stream = new V1Stream(await v1(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'Go', background: true, stream: true }, ann));
      const first = (await stream.next())!;
      // Running upstream: its answer has begun.
      while ((await stream.next())!.data.type !== 'response.output_text.delta');
      const id = first.data.response.id;
      expect((await v1Json(ctx, 'POST', `/v1/responses/${id}/cancel`, undefined, bob)).status).toBe(404);
      const cancelled = await v1Json(ctx, 'POST', `/v1/responses/${id}/cancel`, undefined, ann);
      expect(cancelled.body.status).toBe('cancelled');
      const rest = await stream.all();
      expect(rest.at(-1)!.data).toMatchObject({ type: 'error', code: 'response_cancelled', message: 'The response was cancelled.' });
      await until(() => openai.aborted > aborted, 'the upstream saw the cancel');
    } finally {
      openai.eventDelayMs = 0;
    }
  });

  test('after a restart: a finished response replays whole; one cut off ends failed, saying why, numbered on', async () => {
    const { ctx, ann } = await setup({ durable: true });
    openai.chatScript = () => ({ deltas: [{ content: 'Finished before.' }] });
    const finished = (await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'One', background: true }, ann)).body.id;
    await until(async () => (await v1Json(ctx, 'GET', `/v1/responses/${finished}`, undefined, ann)).body.status === 'completed', 'the first completes');
    openai.chatScript = slowAnswer(200);
    openai.eventDelayMs = 5;
    let head: V1Frame[];
    try {
      const stream = new V1Stream(await v1(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'Two', background: true, stream: true }, ann));
      head = [];
      while (head.length < 6) head.push((await stream.next())!);
      await stream.cancel().catch(() => undefined);
      await ctx.deps.tasks.shutdown();
      await ctx.close();
    } finally {
      openai.eventDelayMs = 0;
    }
    const ctx2 = await createTestContext({ config, sameDatabaseAs: ctx });
    expect(await endInterruptedApiResponses(ctx2.deps, apiEventLog(ctx2.deps), 'any')).toBe(1);
    const again = await new V1Stream(await v1(ctx2, 'GET', `/v1/responses/${finished}?stream=true`, undefined, ann)).all();
    expect(again.at(-1)!.data.response.output[0].content[0].text).toBe('Finished before.');
    const id = head[0]!.data.response.id;
    const rest = await new V1Stream(await v1(ctx2, 'GET', `/v1/responses/${id}?stream=true&starting_after=${head.at(-1)!.data.sequence_number}`, undefined, ann)).all();
    const all = [...head, ...rest];
    expect(seqs(all)).toEqual(count(all.length));
    expect(rest.at(-1)!.data).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: RESTART_MESSAGE } } });
    expect((await v1Json(ctx2, 'GET', `/v1/responses/${id}`, undefined, ann)).body.status).toBe('failed');
    await ctx2.close();
  });

  test('retention: an unkept response goes PARLEY_V1_RESPONSE_RETENTION_HOURS after it ended; a kept one stays, losing its events after PARLEY_EVENT_RETENTION_DAYS', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { ...config, v1ResponseRetentionHours: 24, eventRetentionDays: 7 } });
    const ann = ctx.users[0]!;
    openai.chatScript = () => ({ deltas: [{ content: 'Kept or not.' }] });
    const make = async (store: boolean) => {
      const id = (await v1Json(ctx, 'POST', '/v1/responses', { model: 'env-ai/small', input: 'Go', background: true, store }, ann)).body.id as string;
      await until(async () => (await v1Json(ctx, 'GET', `/v1/responses/${id}`, undefined, ann)).body.status === 'completed', 'the response completes');
      return id;
    };
    const unkept = await make(false);
    const kept = await make(true);
    const recent = await make(false);
    const endedAgo = (id: string, ms: number) => ctx.query(sql`UPDATE api_responses SET finished_at = ${Date.now() - ms} WHERE id = ${id}`);
    await endedAgo(unkept, 25 * HOUR_MS);
    await endedAgo(kept, 25 * HOUR_MS);
    await endedAgo(recent, 23 * HOUR_MS);
    await pruneExpired(ctx.deps);
    expect((await v1Json(ctx, 'GET', `/v1/responses/${unkept}`, undefined, ann)).status).toBe(404);
    expect((await v1Json(ctx, 'GET', `/v1/responses/${kept}`, undefined, ann)).body.status).toBe('completed');
    expect((await v1Json(ctx, 'GET', `/v1/responses/${recent}`, undefined, ann)).body.status).toBe('completed');
    const events = async (id: string) => (await ctx.query<{ n: number }>(sql`SELECT count(*) AS n FROM api_response_events WHERE response_id = ${id}`))[0]!.n;
    expect(Number(await events(kept))).toBeGreaterThan(0);
    await endedAgo(kept, 8 * DAY_MS);
    await pruneExpired(ctx.deps);
    expect((await v1Json(ctx, 'GET', `/v1/responses/${kept}`, undefined, ann)).body.status).toBe('completed');
    expect(Number(await events(kept))).toBe(0);
    await ctx.close();
  });
});
