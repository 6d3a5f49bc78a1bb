import { afterAll, describe, expect, test } from 'bun:test';
import { createTestContext } from './helpers';
import { modelList, startFakeOpenAI } from './fakes/openai';
import type { Config } from '../src/config';

const openai = startFakeOpenAI();
// A model server that takes the connection and never answers.
const silent = Bun.serve({ port: 0, hostname: '127.0.0.1', idleTimeout: 0, fetch: () => new Promise<Response>(() => undefined) });
afterAll(() => (openai.stop(), silent.stop(true)));

const users = [{ email: 'ann@example.org' }];
const world = async (config: Partial<Config>) => {
  const ctx = await createTestContext({ users, config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', ...config } });
  return { ctx, list: () => ctx.json('chat/listModels', {}, ctx.users[0]) };
};
const modelRequests = () => openai.requests.filter((r) => r.path === 'GET /v1/models').length;

describe('chat/listModels', () => {
  test("lists the provider's chat models, the configured one first as the default, and asks the provider once a minute", async () => {
    openai.gets['/v1/models'] = modelList(['large', 'small', 'text-embedding-3-small', 'whisper-1', 'tiny']);
    const before = modelRequests();
    const { list } = await world({});
    const first = await list();
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ models: [{ id: 'small' }, { id: 'large' }, { id: 'tiny' }], default: 'small' });
    // A second page load within the minute is answered from what was learned.
    openai.gets['/v1/models'] = modelList(['other']);
    expect((await list()).body).toEqual(first.body);
    expect(modelRequests() - before).toBe(1);
  });

  test('the configured model is listed even when the provider does not list it', async () => {
    openai.gets['/v1/models'] = modelList(['large']);
    const { list } = await world({ aiModel: 'house-model' });
    expect((await list()).body).toEqual({ models: [{ id: 'house-model' }, { id: 'large' }], default: 'house-model' });
  });

  test('a provider without /v1/models, one that does not answer, and no provider at all: the configured model alone, never an error', async () => {
    delete openai.gets['/v1/models'];
    const missing = await (await world({})).list();
    expect(missing).toMatchObject({ status: 200, body: { models: [{ id: 'small' }], default: 'small' } });

    const started = Date.now();
    const hung = await (await world({ aiBaseUrl: `http://127.0.0.1:${silent.port}/v1` })).list();
    expect(hung).toMatchObject({ status: 200, body: { models: [{ id: 'small' }], default: 'small' } });
    expect(Date.now() - started).toBeLessThan(20_000); // bounded, however slow the machine

    const none = await (await world({ aiProvider: 'none', aiModel: 'gpt-4.1-mini' })).list();
    expect(none).toMatchObject({ status: 200, body: { models: [{ id: 'gpt-4.1-mini' }], default: 'gpt-4.1-mini' } });
  }, 30_000);

  test('signed out: 401', async () => {
    const { ctx } = await world({});
    expect((await ctx.json('chat/listModels', {})).status).toBe(401);
  });
});
