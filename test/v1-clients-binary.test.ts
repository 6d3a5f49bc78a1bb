/**
 * The `/v1` door through the compiled binary with clients nobody here wrote: the official `openai`
 * SDK and Vercel's AI SDK (`ai` with `@ai-sdk/openai-compatible`), against the fake upstreams
 * (an OpenAI-compatible chat server that reports usage, an embeddings server). What a user of those
 * libraries does: list models, chat streamed and not, tools, a refused `n`, a background response
 * resumed after a disconnect, embeddings, a stream left mid-way, `store: true`, an assistant as a model.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import OpenAI from 'openai';
import { generateText, streamText } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { buildBinaryOnce } from './build-binary';
import { modelList, startFakeOpenAI } from './fakes/openai';
import { startFakeEmbeddings } from './fakes/openai-embeddings';
import { startParley, type Parley } from '../scripts/real-models/parley-binary';
import { until } from './helpers';

setDefaultTimeout(120_000);

const openai = startFakeOpenAI();
openai.gets['/v1/models'] = modelList(['small']);
const embeddings = startFakeEmbeddings({ dims: 8 });
afterAll(() => {
  openai.stop();
  embeddings.stop();
});

let parley: Parley | undefined;
async function server(): Promise<Parley> {
  parley ??= await startParley(await buildBinaryOnce(), {
    PARLEY_AI_PROVIDER: 'openai-chat',
    PARLEY_AI_BASE_URL: openai.url,
    PARLEY_AI_MODEL: 'small',
    PARLEY_EMBEDDINGS_BASE_URL: embeddings.url,
    PARLEY_EMBEDDINGS_MODEL: 'embed-small',
    PARLEY_RATE_LIMIT_AI: 'off',
  });
  return parley;
}
afterAll(() => parley?.stop());

const client = async () => {
  const p = await server();
  return new OpenAI({ baseURL: `${p.url}/v1`, apiKey: p.keys[0]!, maxRetries: 0 });
};
const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions');

describe('the official openai SDK against the compiled binary', () => {
  test('models.list: the catalogue, the chat model and the embeddings one', async () => {
    const ids: string[] = [];
    for await (const m of (await client()).models.list()) ids.push(m.id);
    expect(ids).toEqual(['env-ai/small', expect.stringContaining('embed-small')]);
  });

  test('a wrong key: AuthenticationError with OpenAI\'s code', async () => {
    const p = await server();
    const wrong = new OpenAI({ baseURL: `${p.url}/v1`, apiKey: 'pk_not_a_key', maxRetries: 0 });
    const err = await wrong.models.list().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.code).toBe('invalid_api_key');
  });

  test('chat.completions.create, whole and streamed with include_usage; n > 1 refused in OpenAI\'s shape', async () => {
    const c = await client();
    openai.chatScript = () => ({ deltas: [{ content: 'Hello' }, { content: ' there.' }] });
    const whole = await c.chat.completions.create({ model: 'env-ai/small', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2, max_tokens: 50 });
    expect(whole.choices[0]!.message.content).toBe('Hello there.');
    expect(whole.model).toBe('env-ai/small');
    expect(whole.usage!.completion_tokens).toBe(2);
    expect(chatRequests().at(-1)!.body).toMatchObject({ model: 'small', temperature: 0.2, max_tokens: 50 });

    const stream = await c.chat.completions.create({ model: 'env-ai/small', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello there.');
    expect(usage).toMatchObject({ completion_tokens: 2, prompt_tokens: expect.any(Number) });

    const refused = await c.chat.completions.create({ model: 'env-ai/small', messages: [{ role: 'user', content: 'Hi' }], n: 2 }).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.type).toBe('invalid_request_error');
    expect(refused.param).toBe('n');

    const unknown = await c.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'Hi' }] }).catch((e) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.code).toBe('model_not_found');
  });

  test('tools pass through: the call comes back, the client runs it and sends its result', async () => {
    const c = await client();
    openai.chatScript = (body) =>
      body.messages.at(-1).role === 'tool'
        ? { deltas: [{ content: `It is ${body.messages.at(-1).content}.` }] }
        : { deltas: [{ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }], finish_reason: 'tool_calls' };
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const first = await c.chat.completions.create({ model: 'env-ai/small', messages, tools, tool_choice: 'auto' });
    expect(chatRequests().at(-1)!.body).toMatchObject({ tools, tool_choice: 'auto' });
    const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'sunny' });
    const second = await c.chat.completions.create({ model: 'env-ai/small', messages, tools });
    expect(second.choices[0]!.message.content).toBe('It is sunny.');
  });

  test('a client that aborts mid-stream stops the upstream request', async () => {
    const c = await client();
    openai.chatScript = () => ({ deltas: Array.from({ length: 300 }, (_, i) => ({ content: `w${i} ` })) });
    openai.eventDelayMs = 20;
    try {
      const aborted = openai.aborted;
      const leave = new AbortController();
      const stream = await c.chat.completions.create({ model: 'env-ai/small', messages: [{ role: 'user', content: 'Go on' }], stream: true }, { signal: leave.signal });
      let chunks = 0;
      // The SDK ends the iteration quietly on an abort (or throws, depending on timing).
      await (async () => {
        for await (const _ of stream) if (++chunks === 3) leave.abort();
      })().catch(() => undefined);
      expect(chunks).toBeLessThan(10);
      await until(() => openai.aborted > aborted, 'the upstream saw the abort');
    } finally {
      openai.eventDelayMs = 0;
    }
  });

  test('responses.create in the background, the stream dropped, then resumed with starting_after: every event once', async () => {
    const c = await client();
    openai.chatScript = () => ({ deltas: Array.from({ length: 40 }, (_, i) => ({ content: `w${i} ` })) });
    openai.eventDelayMs = 10;
    try {
      const leave = new AbortController();
      const stream = await c.responses.create({ model: 'env-ai/small', input: 'Write on', background: true, stream: true }, { signal: leave.signal });
      const head: OpenAI.Responses.ResponseStreamEvent[] = [];
      await (async () => {
        for await (const e of stream) {
          head.push(e);
          if (head.length === 6) leave.abort();
        }
      })().catch(() => undefined);
      expect(head[0]!.type).toBe('response.created');
      const id = (head[0] as OpenAI.Responses.ResponseCreatedEvent).response.id;
      const last = head.at(-1)!.sequence_number;
      const rest: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const e of await c.responses.retrieve(id, { stream: true, starting_after: last })) rest.push(e);
      const all = [...head, ...rest];
      expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
      expect(rest.at(-1)!.type).toBe('response.completed');
      const text = all.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
      expect(text).toBe(Array.from({ length: 40 }, (_, i) => `w${i} `).join(''));
      const done = await c.responses.retrieve(id);
      expect(done.status).toBe('completed');
      expect(done.output_text).toBe(text);
    } finally {
      openai.eventDelayMs = 0;
    }
  });

  test('embeddings.create through the embeddings connection, floats and base64', async () => {
    const c = await client();
    const model = (await c.models.list()).data.find((m) => m.id.includes('embed-small'))!.id;
    const floats = await c.embeddings.create({ model, input: ['a red car', 'the physician'], encoding_format: 'float' });
    expect(floats.data.map((d) => d.embedding.length)).toEqual([8, 8]);
    expect(floats.model).toBe(model);
    expect(embeddings.requests.at(-1)!.model).toBe('embed-small');
    // The SDK asks for base64 by default and decodes it.
    const decoded = await c.embeddings.create({ model, input: 'a red car' });
    expect(decoded.data[0]!.embedding).toEqual(floats.data[0]!.embedding.map((x) => Math.fround(x)));
  });

  test('store: true keeps the exchange as a conversation in chat/listConversations; by default none is kept', async () => {
    const p = await server();
    const c = await client();
    const listed = async () => (await p.json('chat/listConversations', {})).conversations as { title: string }[];
    const before = (await listed()).length;
    openai.chatScript = () => ({ deltas: [{ content: 'Kept.' }] });
    await c.chat.completions.create({ model: 'env-ai/small', messages: [{ role: 'user', content: 'Not kept' }] });
    expect((await listed()).length).toBe(before);
    await c.chat.completions.create({ model: 'env-ai/small', messages: [{ role: 'user', content: 'Keep this one' }], store: true });
    await until(async () => (await listed()).length === before + 1, 'the conversation is kept');
    expect((await listed()).map((x) => x.title)).toContain('Keep this one');
  });
});

describe('assistants as models, against the compiled binary', () => {
  test('the openai SDK lists an assistant and streams from it; the AI SDK names it too: its instructions first', async () => {
    const p = await server();
    const c = await client();
    const made = await p.json('assistants/create', { name: 'Reviewer', description: 'Reviews code.', instructions: 'Review like a senior engineer.' });
    const id = `assistant:${made.assistant.id}`;
    const listed = (await c.models.list()).data.find((m) => m.id === id);
    expect(listed).toMatchObject({ id, owned_by: 'assistant', name: 'Reviewer' });

    openai.chatScript = () => ({ deltas: [{ content: 'Looks' }, { content: ' fine.' }] });
    const stream = await c.chat.completions.create({ model: id, messages: [{ role: 'system', content: 'You are in an editor.' }, { role: 'user', content: 'Review this' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Looks fine.');
    expect(chatRequests().at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Review like a senior engineer.\n\nYou are in an editor.' });

    const provider = createOpenAICompatible({ name: 'parley', baseURL: `${p.url}/v1`, apiKey: p.keys[0]! });
    expect((await generateText({ model: provider(id), prompt: 'Again' })).text).toBe('Looks fine.');
    expect(chatRequests().at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'Review like a senior engineer.' });
  });
});

describe('Vercel\'s AI SDK against the compiled binary', () => {
  const provider = async () => {
    const p = await server();
    return createOpenAICompatible({ name: 'parley', baseURL: `${p.url}/v1`, apiKey: p.keys[0]!, includeUsage: true });
  };

  test('generateText: the answer and the usage the upstream reported', async () => {
    openai.chatScript = () => ({ deltas: [{ content: 'Generated' }, { content: ' text.' }] });
    const result = await generateText({ model: (await provider())('env-ai/small'), prompt: 'Say something' });
    expect(result.text).toBe('Generated text.');
    expect(result.usage.outputTokens).toBe(2);
  });

  test('streamText: the deltas in order, then the usage', async () => {
    openai.chatScript = () => ({ deltas: [{ content: 'Streamed' }, { content: ' as' }, { content: ' it came.' }] });
    const result = streamText({ model: (await provider())('env-ai/small'), prompt: 'Stream something' });
    const pieces: string[] = [];
    for await (const piece of result.textStream) pieces.push(piece);
    expect(pieces.join('')).toBe('Streamed as it came.');
    expect((await result.usage).outputTokens).toBe(3);
    expect(chatRequests().at(-1)!.body.stream_options).toEqual({ include_usage: true });
  });
});
