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
const ids = (body: { models: { id: string }[] }) => body.models.map((m) => m.id);

describe('chat/listModels', () => {
  test("lists the connection's chat models, the configured one first as the default, and asks the server once a minute", async () => {
    openai.gets['/v1/models'] = modelList(['large', 'small', 'text-embedding-3-small', 'whisper-1', 'tiny']);
    const before = modelRequests();
    const { list } = await world({});
    const first = await list();
    expect(first.status).toBe(200);
    expect(ids(first.body)).toEqual(['env-ai/small', 'env-ai/large', 'env-ai/tiny']);
    expect(first.body.default).toBe('env-ai/small');
    expect(first.body.defaults).toEqual({ chat: 'env-ai/small', research: 'env-ai/o4-mini-deep-research', group: 'env-ai/small', title: 'env-ai/small' });
    expect(first.body.models[0]).toEqual({
      id: 'env-ai/small',
      name: 'small',
      connection: 'env-ai',
      capabilities: { vision: true, tools: true, thinking: false, contextTokens: null },
      available: true,
    });
    // A second page load within the minute is answered from what was learned.
    openai.gets['/v1/models'] = modelList(['other']);
    expect((await list()).body).toEqual(first.body);
    expect(modelRequests() - before).toBe(1);
  });

  test('the configured model is listed even when the server does not list it', async () => {
    openai.gets['/v1/models'] = modelList(['large']);
    const { list } = await world({ aiModel: 'house-model' });
    const { body } = await list();
    expect(ids(body)).toEqual(['env-ai/house-model', 'env-ai/large']);
    expect(body.default).toBe('env-ai/house-model');
  });

  test('a server without /v1/models, one that does not answer, and no server at all: never an error, never slow twice', async () => {
    delete openai.gets['/v1/models'];
    const missing = await (await world({})).list();
    expect(missing.status).toBe(200);
    expect(missing.body.models).toMatchObject([{ id: 'env-ai/small', available: true }]);

    const hungWorld = await world({ aiBaseUrl: `http://127.0.0.1:${silent.port}/v1` });
    const started = Date.now();
    const hung = await hungWorld.list();
    expect(hung.status).toBe(200);
    // Listed, marked: the picker greys it out.
    expect(hung.body.models).toMatchObject([{ id: 'env-ai/small', available: false }]);
    expect(Date.now() - started).toBeLessThan(20_000); // bounded, however slow the machine
    // Asked again within the minute: the answer kept, at once.
    const again = Date.now();
    expect((await hungWorld.list()).body.models).toMatchObject([{ available: false }]);
    expect(Date.now() - again).toBeLessThan(2000);

    const none = await (await world({ aiProvider: 'none' })).list();
    expect(none).toMatchObject({ status: 200, body: { models: [], default: '' } });
  }, 30_000);

  test('signed out: 401', async () => {
    const { ctx } = await world({});
    expect((await ctx.json('chat/listModels', {})).status).toBe(401);
  });
});
