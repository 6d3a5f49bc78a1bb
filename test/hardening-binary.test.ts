import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBinaryServer, type BinaryServer } from './support/binary-server';
import { answerChecker, inputOnlyTypes, responseSchemas } from './support/output-schemas';
import { startFakeOpenAI, toolCallsThenAnswer } from './fakes/openai';
import { solidPng, startFakeImages } from './fakes/openai-images';
import { credentialsIn, startRedirecting } from './fakes/redirecting';

// The second hardening round through the compiled executable: what its answers document, what
// its reports and logs print, where its keys and its fetches go. These spawn processes; shared
// machines can be slow, and nothing here asserts on time.
setDefaultTimeout(120_000);

describe('the compiled binary: /api/openapi.json documents what is sent', () => {
  let server: BinaryServer;
  beforeAll(async () => {
    server = await startBinaryServer();
  });
  afterAll(() => server?.stop());

  test('no response schema types a count as a string (memberCount, unreadCount, bytes were `anyOf: [string/integer, integer]`), and real answers validate', async () => {
    const doc: any = await (await fetch(`${server.url}/api/openapi.json`)).json();
    expect(responseSchemas(doc).flatMap(({ where, schema }) => inputOnlyTypes(schema, where))).toEqual([]);
    const check = answerChecker(doc);
    const answer = async (path: string, body: unknown) => {
      const res = await server.post(path, body);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      const json = await res.json();
      expect(check(path, json)).toEqual([]);
      return json as any;
    };
    await answer('groupChat/createGroupChat', { name: 'Trip' });
    expect((await answer('groupChat/listGroupChats', {})).groupChats[0].memberCount).toBe(1);
    expect((await answer('news/list', {})).unreadCount).toBe(0);
    expect((await answer('support/createThread', { subject: 'Help', message: 'It broke' })).thread.unreadCount).toBe(0);
    await answer('support/listThreads', {});
  });
});

/** The tool outputs the model was sent back, from the fake model server's requests. */
const toolOutputs = (requests: { body: any }[]) => requests.flatMap((r) => (r.body?.messages ?? []).filter((m: any) => m.role === 'tool').map((m: any) => String(m.content)));

describe('the compiled binary: the SSRF guard is IANA\'s special-purpose registries', () => {
  test('an image the images server left at http://[64:ff9b:1::a9fe:a9fe]/ (RFC 8215 local-use NAT64) is refused as private, not fetched', async () => {
    const openai = startFakeOpenAI();
    const images = startFakeImages();
    images.answer = () => ({ json: { created: 1, data: [{ url: 'http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/image.png' }] } });
    openai.chatScript = toolCallsThenAnswer([{ id: 'img1', name: 'generate_image', args: { prompt: 'A fox' } }], 'Done.');
    const server = await startBinaryServer({
      PARLEY_AI_PROVIDER: 'openai-chat',
      PARLEY_AI_BASE_URL: openai.url,
      PARLEY_AI_MODEL: 'small',
      PARLEY_IMAGES_BASE_URL: images.url,
      PARLEY_IMAGES_TIMEOUT_S: '5',
    });
    try {
      expect(await (await server.post('chat/stream', { message: 'Draw a fox' })).text()).toContain('"type":"done"');
      expect(toolOutputs(openai.requests)).toEqual(['No image was made. The image could not be downloaded from where the image server left it: it is on a private network (PARLEY_FETCH_ALLOW_HOSTS).']);
    } finally {
      await server.stop();
      openai.stop();
      images.stop();
    }
  });
});

describe('the compiled binary: keys go to the configured origin only', () => {
  const KEY = 'sk-images-key-stays-home';

  test("a 302 from the images server's result URL to another origin is followed without `Authorization: Bearer <images key>`", async () => {
    const openai = startFakeOpenAI();
    const images = startFakeImages();
    const front = startRedirecting(images.origin);
    front.redirects = /^\/generated\//;
    const png = solidPng(8, 8);
    front.answer = () => new Response(png, { headers: { 'content-type': 'image/png' } });
    images.answer = () => ({ as: 'url', url: `${front.url}/generated/fox.png` });
    openai.chatScript = toolCallsThenAnswer([{ id: 'img1', name: 'generate_image', args: { prompt: 'A fox' } }], 'Done.');
    const server = await startBinaryServer({
      PARLEY_AI_PROVIDER: 'openai-chat',
      PARLEY_AI_BASE_URL: openai.url,
      PARLEY_AI_MODEL: 'small',
      PARLEY_IMAGES_BASE_URL: `${front.url}/v1`,
      PARLEY_IMAGES_API_KEY: KEY,
    });
    try {
      expect(await (await server.post('chat/stream', { message: 'Draw a fox' })).text()).toContain('"type":"done"');
      expect(front.first.find((r) => r.path === '/generated/fox.png')?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(front.received.map((r) => r.path)).toEqual(['/generated/fox.png']);
      expect(front.received.flatMap(credentialsIn)).toEqual([]);
      expect(JSON.stringify(front.received)).not.toContain(KEY);
      expect(toolOutputs(openai.requests)[0]).toStartWith('The image is made and shown to the user');
    } finally {
      await server.stop();
      for (const f of [openai, images, front]) f.stop();
    }
  });

  test("a push service that redirects elsewhere: the Expo access token does not follow (the SDK's fetch, the runtime's rule)", async () => {
    const front = startRedirecting();
    front.status = 307;
    const token = 'expo-access-token-stays-home';
    const server = await startBinaryServer({ PARLEY_EXPO_BASE_URL: front.url, PARLEY_EXPO_ACCESS_TOKEN: token, PARLEY_INTERNAL_EMAIL_DOMAIN: 'example.org', PARLEY_PUSH_RECEIPT_DELAY_MS: '0' });
    try {
      expect((await server.post('notifications/registerPushToken', { token: 'ExponentPushToken[redirect-test]', platform: 'ios' })).status).toBe(200);
      await (await server.post('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'completed' })).text();
      expect(front.first.some((r) => r.headers.authorization === `Bearer ${token}`)).toBe(true);
      expect(front.received.length).toBeGreaterThan(0);
      expect(front.received.flatMap(credentialsIn)).toEqual([]);
      expect(JSON.stringify(front.received)).not.toContain(token);
    } finally {
      await server.stop();
      front.stop();
    }
  });
});
