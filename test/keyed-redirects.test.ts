import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestUser } from './helpers';
import { readFrames } from './sse';
import { startFakeOpenAI, toolCallsThenAnswer } from './fakes/openai';
import { solidPng, startFakeImages } from './fakes/openai-images';
import { startFakeAudio } from './fakes/openai-audio';
import { startFakeOAuthProvider } from './fakes/oauth-provider';
import { startFakeS3 } from './fakes/s3';
import { credentialsIn, startRedirecting, type RedirectingFake } from './fakes/redirecting';
import type { Config } from '../src/config';
import { embedTexts, EmbeddingsError } from '../src/files/embeddings-client';
import { createSearxngSearch } from '../src/ai/search';
import { keyedFetch, CrossOriginRedirectError } from '../src/net/keyed-fetch';
import { safeFetch } from '../src/net/safe-fetch';

/**
 * Keys go to the configured origin only (docs/security.md, "Keys and redirects"). Each client
 * that carries a key talks to a fake that redirects to a second origin recording what reaches
 * it: a call to a configured server is not followed there (the error says why), a result URL is
 * followed without the key. The images server's key used to follow its result URL's 302.
 */
setDefaultTimeout(30_000);

const KEY = 'sk-must-stay-home';
const fakes: { stop(): void }[] = [];
const openai = startFakeOpenAI();
const images = startFakeImages();
const audio = startFakeAudio();
fakes.push(openai, images, audio);
afterAll(() => fakes.forEach((f) => f.stop()));

/** A redirecting front for `upstream` (an origin), stopped after the file. */
function front(upstream?: string): RedirectingFake {
  const f = startRedirecting(upstream);
  fakes.push(f);
  return f;
}

/** Nothing that reached the second origin carried a credential, nor the key anywhere in it. */
function nothingLeaked(f: RedirectingFake, secret = KEY) {
  expect(f.received.flatMap(credentialsIn)).toEqual([]);
  expect(JSON.stringify(f.received)).not.toContain(secret);
}

async function context(config: Partial<Config>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-keyed-'));
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { dataDir, rateLimitAi: { capacity: 1000, perMs: 1000 }, ...config } });
  return { ctx, ann: ctx.users[0] as TestUser };
}

/** The start of a real WAV file (RIFF header), enough for Parley to take it as a recording. */
const WAV = (() => {
  const out = new Uint8Array(3000);
  out.set([...new TextEncoder().encode('RIFF'), 0x24, 0x08, 0, 0, ...new TextEncoder().encode('WAVEfmt '), 16, 0, 0, 0, 1, 0, 1, 0]);
  return out;
})();

const streamError = async (res: Response) => (await readFrames(res)).find((f) => f.data?.type === 'error')?.data?.message as string | undefined;

beforeEach(() => {
  openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }] });
  openai.requests.length = 0;
  images.answer = () => ({});
});

describe('the shared piece: keyedFetch and safeFetch', () => {
  test('keyedFetch follows redirects within the origin, refuses one to another origin before anything is sent there, whatever the status', async () => {
    const f = front();
    for (const status of [301, 302, 303, 307, 308] as const) {
      f.status = status;
      const sent = keyedFetch()(`${f.url}/v1/models`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'x-api-key': KEY }, body: '{}' });
      expect(await sent.then(() => 'followed', (err) => (err instanceof CrossOriginRedirectError ? `refused ${err.to}` : String(err)))).toBe(`refused ${f.elsewhere}`);
    }
    // Credentials in the URL itself too.
    await keyedFetch()(`http://user:${KEY}@${f.url.slice(7)}/search`).catch(() => undefined);
    expect(f.first.at(-1)!.headers.authorization).toStartWith('Basic ');
    nothingLeaked(f);
    expect(f.received).toEqual([]);
    // Within one origin a redirect is followed, with the key and, for 307, the body.
    const same = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async (req) => (new URL(req.url).pathname === '/a' ? Response.redirect('/b', 307) : Response.json({ auth: req.headers.get('authorization'), body: await req.text() })) });
    fakes.push({ stop: () => same.stop(true) });
    const res = await keyedFetch()(`http://127.0.0.1:${same.port}/a`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: 'payload' });
    expect(await res.json()).toEqual({ auth: `Bearer ${KEY}`, body: 'payload' });
  });

  test('safeFetch follows a redirect to another origin without the credentials, and does not give them back on a later hop home', async () => {
    const f = front();
    f.answer = () => Response.redirect(`${f.url}/home-again`, 302);
    f.redirects = /^\/away/;
    await safeFetch(`${f.url}/away`, { allowPrivate: true, headers: { authorization: `Bearer ${KEY}`, 'x-api-key': KEY, cookie: `s=${KEY}`, accept: 'image/png' } }).catch(() => undefined);
    expect(f.received.map((r) => r.path)).toEqual(['/away']);
    expect(f.received[0]!.headers.accept).toBe('image/png');
    nothingLeaked(f);
    // Back on the first origin, the request arrives still without them.
    expect(f.first.map((r) => [r.path, credentialsIn(r).length > 0])).toEqual([
      ['/away', true],
      ['/home-again', false],
    ]);
  });
});

describe('each client that carries a key, against a server that redirects elsewhere', () => {
  test('AI, openai-chat: the turn ends with an error saying why; the other origin gets nothing', async () => {
    const f = front(new URL(openai.url).origin);
    const { ctx, ann } = await context({ aiProvider: 'openai-chat', aiBaseUrl: `${f.url}/v1`, aiApiKey: KEY, aiModel: 'small' });
    const message = await streamError(await ctx.call('chat/stream', { message: 'Hi' }, ann));
    expect(message).toBe('The AI provider redirected Parley to another address, which Parley does not follow: its key goes to the configured address only (PARLEY_AI_BASE_URL).');
    expect(f.first.some((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(f.received).toEqual([]);
  });

  test('AI, openai-responses: the same', async () => {
    const f = front(new URL(openai.url).origin);
    const { ctx, ann } = await context({ aiProvider: 'openai-responses', aiBaseUrl: `${f.url}/v1`, aiApiKey: KEY, aiModel: 'small' });
    expect(await streamError(await ctx.call('chat/stream', { message: 'Hi' }, ann))).toContain('redirected Parley to another address');
    expect(f.received).toEqual([]);
  });

  test('AI, the model list and the context probe: a redirect elsewhere is not followed', async () => {
    const f = front(new URL(openai.url).origin);
    const { ctx, ann } = await context({ aiProvider: 'openai-chat', aiBaseUrl: `${f.url}/v1`, aiApiKey: KEY, aiModel: 'small' });
    expect((await ctx.json('chat/listModels', {}, ann)).status).toBe(200);
    expect(f.first.length).toBeGreaterThan(0);
    expect(f.received).toEqual([]);
  });

  test('embeddings: refused with a sentence that names the setting', async () => {
    const f = front();
    const config = (await context({ embeddingsBaseUrl: `${f.url}/v1`, embeddingsApiKey: KEY })).ctx.deps.config;
    const err = await embedTexts(config, ['hello']).catch((e) => e);
    expect(err).toBeInstanceOf(EmbeddingsError);
    expect(err.message).toBe('The embeddings server redirected Parley to another address, which Parley does not follow: its key goes to the configured address only (PARLEY_EMBEDDINGS_BASE_URL).');
    expect(f.received).toEqual([]);
  });

  test('images: the API call redirected elsewhere is refused (the tool says why)', async () => {
    const f = front(images.origin);
    const { ctx, ann } = await context({ aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', imagesBaseUrl: `${f.url}/v1`, imagesApiKey: KEY });
    openai.chatScript = toolCallsThenAnswer([{ id: 'img1', name: 'generate_image', args: { prompt: 'A fox' } }], 'Done.');
    await (await ctx.call('chat/stream', { message: 'Draw' }, ann)).text();
    const tool = openai.requests.flatMap((r) => (r.body?.messages ?? []).filter((m: any) => m.role === 'tool'));
    expect(tool.map((m: any) => m.content)).toEqual(['No image was made. The image server redirected Parley to another address, which Parley does not follow: its key goes to the configured address only (PARLEY_IMAGES_BASE_URL).']);
    expect(f.received).toEqual([]);
  });

  test("images: a 302 from the images server's result URL to another origin is followed without the key (it used to carry `Authorization: Bearer <images key>`)", async () => {
    const f = front(images.origin);
    f.redirects = /^\/generated\//;
    const png = solidPng(8, 8);
    f.answer = () => new Response(png, { headers: { 'content-type': 'image/png' } });
    images.answer = () => ({ as: 'url', url: `${f.url}/generated/fox.png` });
    const { ctx, ann } = await context({ aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', imagesBaseUrl: `${f.url}/v1`, imagesApiKey: KEY });
    openai.chatScript = toolCallsThenAnswer([{ id: 'img1', name: 'generate_image', args: { prompt: 'A fox' } }], 'Done.');
    await (await ctx.call('chat/stream', { message: 'Draw' }, ann)).text();
    // The result URL is on the images server's own origin: it got the key, and redirected.
    expect(f.first.find((r) => r.path === '/generated/fox.png')?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(f.received.map((r) => r.path)).toEqual(['/generated/fox.png']);
    nothingLeaked(f);
    // The image was made all the same.
    expect((await ctx.json('files/listFiles', {}, ann)).body.files).toHaveLength(1);
  });

  test('speech: text to speech and speech to text are refused with a 502 naming the setting', async () => {
    const f = front(new URL(audio.url).origin);
    const { ctx, ann } = await context({ ttsBaseUrl: `${f.url}/v1`, ttsApiKey: KEY, sttBaseUrl: `${f.url}/v1`, sttApiKey: KEY });
    const spoken = await ctx.json('audio/speak', { text: 'Hello' }, ann);
    expect({ status: spoken.status, message: spoken.body.message }).toEqual({
      status: 502,
      message: 'The text-to-speech server redirected Parley to another address, which Parley does not follow: its key goes to the configured address only (PARLEY_TTS_BASE_URL).',
    });
    const form = new FormData();
    form.set('file', new File([WAV], 'a.wav', { type: 'audio/wav' }));
    const heard = await ctx.app.handle(new Request('http://localhost/api/audio/transcribe', { method: 'POST', body: form, headers: { 'x-api-key': ann.key } }));
    expect({ status: heard.status, message: ((await heard.json()) as any).message }).toEqual({
      status: 502,
      message: 'The speech-to-text server redirected Parley to another address, which Parley does not follow: its key goes to the configured address only (PARLEY_STT_BASE_URL).',
    });
    expect(f.first.length).toBe(2);
    expect(f.received).toEqual([]);
  });

  test('web search (SearxNG, a user and password in its URL): refused', async () => {
    const f = front();
    const search = createSearxngSearch(`http://searcher:${KEY}@${f.url.slice('http://'.length)}`);
    const err = await search.search('owls').catch((e) => e);
    expect(err.message).toBe('The search provider redirected Parley to another address, which Parley does not follow: its key goes to the configured address only (PARLEY_SEARXNG_URL).');
    expect(f.first[0]!.headers.authorization).toStartWith('Basic ');
    expect(f.received).toEqual([]);
  });

  test("OAuth: the token call's client secret (arctic, the runtime's fetch) and the user-info call's access token (keyedFetch) stay with the provider", async () => {
    const client = { clientId: 'parley-client', clientSecret: `secret-${KEY}` };
    const provider = startFakeOAuthProvider(client);
    fakes.push(provider);
    const f = front(provider.url);
    const base = f.url + (provider.baseUrl('gitea').slice(provider.url.length));
    const { ctx } = await context({ publicUrl: 'http://localhost', oauthGiteaClientId: client.clientId, oauthGiteaClientSecret: client.clientSecret, oauthGiteaBaseUrl: base });
    const signIn = async () => {
      const start = await ctx.app.handle(new Request('http://localhost/api/auth/oauth/gitea'));
      const cookie = start.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
      const back = authorize.headers.get('location')!;
      return ctx.app.handle(new Request(back, { headers: { cookie } }));
    };
    // The token endpoint redirects (307: the body would be sent again): the secret is not in what arrives.
    f.status = 307;
    f.redirects = /access_token|\/token$/;
    const first = await signIn();
    expect(first.headers.getSetCookie().some((c) => c.startsWith('parley_session=') && !c.startsWith('parley_session=;'))).toBe(false);
    expect(f.received.length).toBe(1);
    expect(f.received.flatMap(credentialsIn)).toEqual([]);
    expect(JSON.stringify(f.received)).not.toContain(client.clientSecret);
    // The user-info endpoint redirects: not followed, so the access token goes nowhere else.
    f.received.length = 0;
    f.status = 302;
    f.redirects = /userinfo/;
    await signIn();
    expect(f.first.some((r) => /userinfo/.test(r.path) && r.headers.authorization?.startsWith('Bearer '))).toBe(true);
    expect(f.received).toEqual([]);
  });

  test("S3 (Bun's S3 client): a redirected object request reaches the other origin without the signature", async () => {
    const s3 = startFakeS3({ bucket: 'parley-files', accessKeyId: 'AKIDPARLEYTEST', secretAccessKey: KEY });
    fakes.push(s3);
    const f = front(s3.url);
    f.status = 307;
    f.answer = () => new Response(null, { status: 200, headers: { etag: '"x"' } });
    const { ctx, ann } = await context({ filesS3Bucket: s3.bucket, filesS3Endpoint: f.url, filesS3Region: 'eu-central-1', filesS3AccessKeyId: 'AKIDPARLEYTEST', filesS3SecretAccessKey: KEY });
    const form = new FormData();
    form.set('file', new File(['plain words'], 'notes.txt', { type: 'text/plain' }));
    await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': ann.key }, body: form }));
    expect(f.first.some((r) => r.headers.authorization?.startsWith('AWS4-HMAC-SHA256'))).toBe(true);
    expect(f.received.length).toBeGreaterThan(0);
    nothingLeaked(f);
  });
});
