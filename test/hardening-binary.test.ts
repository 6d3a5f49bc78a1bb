import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { waitForListening } from '../scripts/lib/wait-for-listening';
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

describe('the compiled binary: secrets in URLs are masked in every report, log and error', () => {
  const SECRETS = ['ai-user-x1', 'aipass-x1', 'search-user-x2', 'hunter2-x2', 'tok-123', 'key-456', 'db-user-x3', 'dbpass-x3', 'pgpw-x3'];
  const env = {
    PARLEY_AI_PROVIDER: 'openai-chat',
    PARLEY_AI_BASE_URL: 'http://ai-user-x1:aipass-x1@127.0.0.1:9/v1?api_key=key-456',
    PARLEY_AI_MODEL: 'small',
    PARLEY_SEARCH_PROVIDER: 'searxng',
    PARLEY_SEARXNG_URL: 'http://search-user-x2:hunter2-x2@127.0.0.1:9/?token=tok-123',
  };
  const leaked = (text: string) => SECRETS.filter((secret) => text.includes(secret));

  test('`parley doctor`, admin/doctor, admin/getSettings, the server log and `parley db copy` show the servers, never their user info or `?token=`', async () => {
    const out = await buildBinaryOnce();
    const base = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'parley-mask-')), 'data'), ...env };
    const run = (args: string[]) => {
      const p = Bun.spawnSync([out, ...args], { env: base });
      return { code: p.exitCode, text: p.stdout.toString() + p.stderr.toString() };
    };
    expect(run(['user', 'create', '--email', 'boss@example.org', '--admin']).code).toBe(0);
    const { key } = JSON.parse(run(['apikey', 'create', '--email', 'boss@example.org', '--json']).text);
    const doctor = run(['doctor']);
    expect(doctor.text).toContain('http://********:********@127.0.0.1:9/');
    expect(leaked(doctor.text)).toEqual([]);
    const copy = run(['db', 'copy', '--to', 'postgres://db-user-x3:dbpass-x3@127.0.0.1:1/none?password=pgpw-x3']);
    expect(copy.code).toBe(2);
    expect(copy.text).toContain('postgres://********:********@127.0.0.1:1/none?password=********');
    expect(leaked(copy.text)).toEqual([]);
    const proc = Bun.spawn([out, 'serve', '--port', '0'], { env: base, stdout: 'pipe', stderr: 'pipe' });
    try {
      const url = await waitForListening(proc);
      const post = async (path: string, body: unknown) => (await fetch(`${url}/api/${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) })).text();
      const settings = await post('admin/getSettings', {});
      expect(settings).toContain('http://********:********@127.0.0.1:9/?token=********');
      expect(leaked(settings)).toEqual([]);
      const report = await post('admin/doctor', {});
      expect(report).toContain('********:********@127.0.0.1:9');
      expect(leaked(report)).toEqual([]);
      // A turn against the unreachable AI server: whatever the log says about it, masked.
      await post('chat/stream', { message: 'Hi' });
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
    expect(leaked(await new Response(proc.stderr).text())).toEqual([]);
  });
});
