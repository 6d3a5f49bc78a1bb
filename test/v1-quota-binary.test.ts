/**
 * A quota exceeded, as the apps people use see it (docs/openai-api.md, "Quotas and clients"): the
 * official `openai` SDK and Vercel's AI SDK against the compiled binary, with a fake upstream
 * that reports usage. A user whose tier's allowance the upstream's own count used up, with no
 * credits, is refused before anything goes upstream: 429 `insufficient_quota` in OpenAI's shape
 * with `Retry-After` until the reset. Each SDK raises its error; the requests each one sends
 * (its retries) are counted. On both stores.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import OpenAI from 'openai';
import { APICallError, generateText, RetryError } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { modelList, startFakeOpenAI } from './fakes/openai';
import { startBinaryServer, type BinaryServer } from './support/binary-server';

setDefaultTimeout(120_000);

const ADMIN = 'admin@example.org';
const openai = startFakeOpenAI();
openai.gets['/v1/models'] = modelList(['small']);
let server: BinaryServer;

beforeAll(async () => {
  server = await startBinaryServer({ PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: openai.url, PARLEY_AI_MODEL: 'small', PARLEY_RATE_LIMIT_AI: 'off' }, [], { admins: [ADMIN] });
  // FREE (every new user's tier): 50 tokens a day. The first answer is reported as 60.
  const set = await server.postAs(ADMIN, 'admin/setUsageTier', { name: 'FREE', period: 'day', tokens: 50 });
  expect(set.status).toBe(200);
  openai.chatScript = () => ({ deltas: [{ content: 'Hello.' }], usage: { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 } });
  const first = await new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 }).chat.completions.create({ model: 'env-ai/small', messages: [{ role: 'user', content: 'Hi' }] });
  expect(first.usage?.total_tokens).toBe(60);
});
afterAll(async () => {
  await server?.stop();
  openai.stop();
});

/** A fetch that counts what a client sends to Parley: its retries show up here. */
function countingFetch() {
  const sent: string[] = [];
  const fetcher = (async (url: string | URL | Request, init?: RequestInit) => {
    sent.push(`${init?.method ?? 'GET'} ${new URL(String(url)).pathname}`);
    return fetch(url, init);
  }) as typeof fetch;
  return { sent, fetch: fetcher };
}

const upstreamCalls = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').length;
/** Seconds from now to the next midnight UTC: when a daily allowance resets. */
const toMidnight = () => (Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000;

describe('a quota exceeded through the clients, against the compiled binary', () => {
  test('the openai SDK: RateLimitError (insufficient_quota, Retry-After until midnight UTC) on chat completions, streamed or not, and responses; one request each at its default maxRetries; nothing upstream', async () => {
    const counted = countingFetch();
    // Its default retries (2): `x-should-retry: false` tells it not to; without it, it would sleep for `Retry-After` (hours).
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, fetch: counted.fetch });
    const before = upstreamCalls();
    for (const stream of [false, true]) {
      const err = await client.chat.completions.create({ model: 'env-ai/small', messages: [{ role: 'user', content: 'Again' }], stream }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect(err.status).toBe(429);
      expect(err.type).toBe('insufficient_quota');
      expect(err.code).toBe('insufficient_quota');
      expect(err.message).toContain('Your FREE allowance of 50 tokens a day is used up');
      expect(err.message).toContain('It resets at');
      const retryAfter = Number(err.headers.get('retry-after'));
      expect(Math.abs(retryAfter - toMidnight())).toBeLessThan(30);
      expect(err.headers.get('x-should-retry')).toBe('false');
    }
    const viaResponses = await client.responses.create({ model: 'env-ai/small', input: 'Again', background: true }).catch((e) => e);
    expect(viaResponses).toBeInstanceOf(OpenAI.RateLimitError);
    expect(viaResponses.code).toBe('insufficient_quota');
    expect(counted.sent).toEqual(['POST /v1/chat/completions', 'POST /v1/chat/completions', 'POST /v1/responses']);
    expect(upstreamCalls()).toBe(before);
  });

  test("Vercel's AI SDK: APICallError with status 429; with its default retries, three requests over its own backoff (Retry-After past a minute is not waited for)", async () => {
    const counted = countingFetch();
    const model = createOpenAICompatible({ name: 'parley', baseURL: `${server.url}/v1`, apiKey: server.key, fetch: counted.fetch })('env-ai/small');
    const before = upstreamCalls();

    const once = await generateText({ model, prompt: 'Again', maxRetries: 0 }).catch((e) => e);
    expect(APICallError.isInstance(once)).toBe(true);
    expect(once.statusCode).toBe(429);
    expect(once.isRetryable).toBe(true);
    expect(once.message).toContain('allowance of 50 tokens a day is used up');
    expect(Number(once.responseHeaders['retry-after'])).toBeGreaterThan(0);
    expect(counted.sent.length).toBe(1);

    // After its backoff (2 s, then 4 s): a Retry-After past a minute is not waited for.
    const retried = await generateText({ model, prompt: 'Again' }).catch((e) => e);
    expect(RetryError.isInstance(retried)).toBe(true);
    expect(retried.reason).toBe('maxRetriesExceeded');
    expect(APICallError.isInstance(retried.lastError) && retried.lastError.statusCode).toBe(429);
    expect(counted.sent.length).toBe(1 + 3);
    expect(upstreamCalls()).toBe(before);
  });
});
