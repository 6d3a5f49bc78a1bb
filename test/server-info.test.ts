import { describe, expect, test } from 'bun:test';
import { createTestContext, SPEC_ERRORS } from './helpers';
import { VERSION } from '../src/version';

const ann = { email: 'ann@example.org' };

describe('server/getCapabilities', () => {
  test('nothing beyond chat set up: voice, semantic search, images and web search are off; the limits are the settings', async () => {
    const ctx = await createTestContext({ users: [ann], config: { filesMaxBytes: 1000, filesMaxPerUser: 7, filesQuotaBytes: 5000, memoryMaxPerUser: 12, sttMaxBytes: 300 } });
    const { status, body } = await ctx.json('server/getCapabilities', {}, ctx.users[0]!);
    expect(status).toBe(200);
    expect(body).toEqual({
      version: VERSION,
      voice: { transcribe: false, speak: false, maxRecordingBytes: 300 },
      files: { maxBytes: 1000, maxFiles: 7, quotaBytes: 5000, semanticSearch: false },
      imageGeneration: false,
      webSearch: false,
      memory: { maxPerUser: 12 },
    });
  });

  test('each server set up turns its feature on, and no address or key is given out', async () => {
    const ctx = await createTestContext({
      users: [ann],
      config: {
        sttBaseUrl: 'http://stt.internal:8000/v1',
        ttsBaseUrl: 'http://tts.internal:8880/v1',
        ttsApiKey: 'sk-secret-tts',
        embeddingsBaseUrl: 'http://embed.internal/v1',
        imagesBaseUrl: 'http://images.internal/v1',
        searchProvider: 'searxng',
        searxngUrl: 'http://searx.internal',
      },
    });
    const res = await ctx.json('server/getCapabilities', {}, ctx.users[0]!);
    expect(res.body).toMatchObject({ voice: { transcribe: true, speak: true }, files: { semanticSearch: true }, imageGeneration: true, webSearch: true });
    expect(JSON.stringify(res.body)).not.toMatch(/internal|sk-secret/);
  });

  test('only one voice direction set up: the other stays off', async () => {
    const ctx = await createTestContext({ users: [ann], config: { ttsBaseUrl: 'http://tts.internal/v1' } });
    expect((await ctx.json('server/getCapabilities', {}, ctx.users[0]!)).body.voice).toMatchObject({ transcribe: false, speak: true });
  });

  test('401 without a credential', async () => {
    const ctx = await createTestContext({ users: [ann] });
    expect(await ctx.json('server/getCapabilities', {})).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });
  });
});
