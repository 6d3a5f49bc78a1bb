/**
 * The `/v1` door against a real llama-server, through the compiled `parley`, with the clients
 * people use: the official `openai` SDK and Vercel's AI SDK. The tiny model's words mean nothing;
 * what is checked is the wire: the models listed, an answer whole and streamed with the usage the
 * server reported, a stream left mid-way, a background response followed to its end.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import OpenAI from 'openai';
import { generateText, streamText } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { buildBinaryOnce } from '../../test/build-binary';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import { startParley, type Parley } from './parley-binary';

// Real processes on a shared 2-core machine; nothing here asserts on time.
setDefaultTimeout(180_000);

let server: LlamaServer | undefined;
let parley: Parley | undefined;
let client: OpenAI;
beforeAll(async () => {
  server = await startLlamaServer({ dir: llamaServerDir(), model: testModelPath(), contextTokens: 2048, maxAnswerTokens: 64 });
  parley = await startParley(await buildBinaryOnce(), { PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: server.apiUrl, PARLEY_AI_API_KEY: 'none', PARLEY_AI_MODEL: 'tiny' });
  client = new OpenAI({ baseURL: `${parley.url}/v1`, apiKey: parley.keys[0]!, maxRetries: 0 });
});
afterAll(async () => {
  await parley?.stop();
  await server?.stop();
});

const MODEL = 'env-ai/tiny';
const ask = [{ role: 'user' as const, content: 'Once upon a time' }];

describe('/v1 against a real llama-server', () => {
  test('the openai SDK: models, an answer whole and streamed with the server\'s usage', async () => {
    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).toContain(MODEL);
    const whole = await client.chat.completions.create({ model: MODEL, messages: ask, max_tokens: 16 });
    expect(whole.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(whole.usage!.completion_tokens).toBeGreaterThan(0);
    expect(whole.usage!.completion_tokens).toBeLessThanOrEqual(16);
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of await client.chat.completions.create({ model: MODEL, messages: ask, max_tokens: 16, stream: true, stream_options: { include_usage: true } })) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage!.prompt_tokens).toBeGreaterThan(0);
    expect(usage!.completion_tokens).toBeGreaterThan(0);
  });

  test('a stream left mid-way ends, and the server answers the next request', async () => {
    const leave = new AbortController();
    let chunks = 0;
    await (async () => {
      for await (const _ of await client.chat.completions.create({ model: MODEL, messages: ask, max_tokens: 400, stream: true }, { signal: leave.signal }))
        if (++chunks === 2) leave.abort();
    })().catch(() => undefined);
    // The chunks of a network read already taken still arrive; not the rest of the answer.
    expect(chunks).toBeLessThan(400);
    const next = await client.chat.completions.create({ model: MODEL, messages: ask, max_tokens: 8 });
    expect(next.choices[0]!.finish_reason).toMatch(/stop|length/);
  });

  test('a background response followed to its end through responses.retrieve', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Once upon a time', max_output_tokens: 16, background: true });
    expect(created.status).toBe('queued');
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of await client.responses.retrieve(created.id, { stream: true, starting_after: 0 })) events.push(e);
    expect(events[0]!.sequence_number).toBe(1);
    // The tiny model writes until its limit: `incomplete` (max_output_tokens), as OpenAI says it.
    expect(['response.completed', 'response.incomplete']).toContain(events.at(-1)!.type);
    const done = await client.responses.retrieve(created.id);
    expect(done.output_text.length).toBeGreaterThan(0);
    expect(done.usage!.output_tokens).toBeGreaterThan(0);
  });

  test('Vercel\'s AI SDK: generateText and streamText', async () => {
    const provider = createOpenAICompatible({ name: 'parley', baseURL: `${parley!.url}/v1`, apiKey: parley!.keys[0]!, includeUsage: true });
    const generated = await generateText({ model: provider(MODEL), prompt: 'Once upon a time', maxOutputTokens: 12 });
    expect(generated.text.length).toBeGreaterThan(0);
    expect(generated.usage.outputTokens).toBeGreaterThan(0);
    const streamed = streamText({ model: provider(MODEL), prompt: 'Once upon a time', maxOutputTokens: 12 });
    let text = '';
    for await (const piece of streamed.textStream) text += piece;
    expect(text.length).toBeGreaterThan(0);
    expect((await streamed.usage).outputTokens).toBeGreaterThan(0);
  });
});
