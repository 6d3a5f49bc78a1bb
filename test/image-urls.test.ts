import { afterAll, describe, expect, test } from 'bun:test';
import { createTestContext } from './helpers';
import { readFrames, typesOf } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import type { Config } from '../src/config';
import { checkImageUrl } from '../src/net/image-url';
import { appendItem } from '../src/chat/conversation.store';
import { IMAGE_LEFT_OUT } from '../src/chat/respond';

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

const chatConfig = (extra: Partial<Config> = {}): Partial<Config> => ({ aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', ...extra });
const users = [{ email: 'ann@example.org' }];
/** Everything the fake model server was sent, as one string: a refused URL must appear nowhere in it. */
const upstreamText = () => JSON.stringify(openai.requests);

const STRICT = { allowLan: false };
const LAN = { allowLan: true };

describe('checkImageUrl: what the AI provider may be given', () => {
  test.each([
    'data:image/png;base64,iVBORw0KGgo=',
    'data:image/svg+xml;utf8,<svg/>',
    'https://img.example/a.png',
    'https://8.8.8.8/a.png',
    'https://[2606:4700::1111]/a.png',
  ])('accepts %s', (url) => {
    expect(checkImageUrl(url, STRICT)).toEqual({ ok: true, url });
  });

  test.each([
    ['file:///etc/passwd', 'not file:'],
    ['http://img.example/a.png', 'not http:'],
    ['http://127.0.0.1:8787/api/health', 'not http:'],
    ['https://127.0.0.1/a.png', 'not 127.0.0.1'],
    ['https://0x7f000001/a.png', 'not 127.0.0.1'], // the URL parser reads numeric hosts as the address they are
    ['https://169.254.169.254/latest/meta-data/', 'not 169.254.169.254'],
    ['https://192.168.1.1/', 'not 192.168.1.1'],
    ['https://[::1]/a.png', 'not [::1]'],
    ['https://[::ffff:10.0.0.1]/a.png', 'not [::ffff:a00:1]'],
    ['https://localhost/a.png', 'not localhost'],
    ['https://app.localhost/a.png', 'not app.localhost'],
    ['https://nas/a.png', 'not nas'],
    ['https://printer.local/a.png', 'not printer.local'],
    ['https://router.lan./a.png', 'not router.lan.'],
    ['ftp://img.example/a.png', 'not ftp:'],
    ['javascript:alert(1)', 'not javascript:'],
    ['data:text/html,<script>alert(1)</script>', 'data:image/'],
    [' data:image/png;base64,AAA', 'data:image/'],
    ['/relative/a.png', 'https: URL'],
  ])('refuses %s', (url, reason) => {
    const c = checkImageUrl(url, STRICT);
    expect(c.ok).toBe(false);
    expect(!c.ok && c.reason).toContain(reason);
  });

  test('PARLEY_AI_IMAGE_ALLOW_LAN lets http: and LAN hosts through, never other schemes or non-images', () => {
    for (const url of ['http://192.168.1.20/a.png', 'https://nas/a.png', 'http://printer.local/a.png', 'https://127.0.0.1/a.png'])
      expect(checkImageUrl(url, LAN)).toEqual({ ok: true, url });
    for (const url of ['file:///etc/passwd', 'ftp://nas/a.png', 'data:text/plain,hi']) expect(checkImageUrl(url, LAN).ok).toBe(false);
  });

  test('an accepted http(s) URL is passed on as parsed, so the model server reads the host that was checked', () => {
    expect(checkImageUrl('HTTPS://IMG.Example\\a.png', STRICT)).toEqual({ ok: true, url: 'https://img.example/a.png' });
  });
});

describe('chat/stream and chat/streamDeepResearch with image URLs', () => {
  test.each(['chat/stream', 'chat/streamDeepResearch'])('%s: file: and loopback URLs → 400 naming each field, nothing sent upstream', async (path) => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    const before = openai.requests.length;
    const images = [{ imageUrl: 'https://img.example/ok.png' }, { imageUrl: 'file:///etc/passwd' }, { imageUrl: 'http://127.0.0.1:8787/api/health', detail: 'low' }];
    const { status, body } = await ctx.json(path, { message: 'What is this?', images }, ctx.users[0]);
    expect(status).toBe(400);
    expect(body).toMatchObject({ defined: false, code: 'BAD_REQUEST', status: 400, message: 'Input validation failed' });
    expect(body.data.issues.map((i: { path: unknown }) => i.path)).toEqual([
      ['images', 1, 'imageUrl'],
      ['images', 2, 'imageUrl'],
    ]);
    expect(openai.requests.length).toBe(before);
    expect(await ctx.count('responses')).toBe(0);
  });

  test('a data: image and a public https: URL reach the model; with PARLEY_AI_IMAGE_ALLOW_LAN an http: LAN URL does too', async () => {
    const strict = await createTestContext({ users, config: chatConfig() });
    const images = [{ imageUrl: 'data:image/png;base64,iVBORw0KGgo=' }, { imageUrl: 'https://img.example/a.png' }];
    expect(typesOf(await readFrames(await strict.call('chat/stream', { message: 'Look', images }, strict.users[0])))).toContain('done');
    expect(upstreamText()).toContain('https://img.example/a.png');

    const lan = await createTestContext({ users, config: chatConfig({ aiImageAllowLan: true }) });
    const frames = await readFrames(await lan.call('chat/stream', { message: 'Look', images: [{ imageUrl: 'http://192.168.1.20/cam.jpg' }] }, lan.users[0]));
    expect(typesOf(frames)).toContain('done');
    expect(upstreamText()).toContain('http://192.168.1.20/cam.jpg');
  });

  test('an image URL stored earlier and refused now is left out of the next turn, with a note: the conversation keeps working, the URL never sent', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    const ann = ctx.users[0]!;
    const first = await readFrames(await ctx.call('chat/stream', { message: 'Hi' }, ann));
    const conversationId = first[0]!.data.conversationId;
    // As a turn taken while PARLEY_AI_IMAGE_ALLOW_LAN was on (or before the rule) left it.
    await ctx.store.read((tx) => appendItem(tx, { conversationId, role: 'user', content: 'And this?', authorId: ann.user.id, parts: [{ type: 'input_image', imageUrl: 'http://127.0.0.1:9/secret.png' }] }));
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Well?', conversationId }, ann));
    expect(typesOf(frames)).toContain('done');
    expect(typesOf(frames)).not.toContain('error');
    expect(upstreamText()).toContain(IMAGE_LEFT_OUT);
    expect(upstreamText()).not.toContain('127.0.0.1:9');
  });
});
