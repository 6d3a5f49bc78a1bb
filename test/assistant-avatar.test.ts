/**
 * Assistants' avatars (docs/assistants.md, "Avatar"): an uploaded image becomes a 128-pixel square
 * WebP, served at the assistant's `avatarUrl` to whoever may use it (404 to anyone else), replaced
 * and removed by whoever may change it; images refused as uploads are (bytes, pixels from the
 * header, bombs in compressed chunks). Through HTTP, on both stores.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Transformer } from '@napi-rs/image';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { updateUser } from '../src/account/account.store';
import { iccpBomb } from './support/image-bombs';

setDefaultTimeout(30_000);

async function setup(config = {}) {
  const ctx = await createTestContext({
    users: [
      { email: 'admin@example.org', name: 'Ada' },
      { email: 'ann@example.org', name: 'Ann' },
      { email: 'bob@example.org', name: 'Bob' },
    ],
    config: { rateLimitWrite: { capacity: 1000, perMs: 1000 }, ...config },
  });
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann, bob };
}

const dataUrl = (bytes: Uint8Array) => `data:image/png;base64,${Buffer.from(bytes).toString('base64')}`;
/** A wide picture, red on its left half and blue on its right: an avatar crops it to its middle. */
async function widePng(w = 400, h = 200): Promise<Uint8Array> {
  const px = new Uint8Array(w * h * 4);
  for (let i = 0; i < w * h; i++) px.set((i % w) < w / 2 ? [255, 0, 0, 255] : [0, 0, 255, 255], i * 4);
  return new Uint8Array(await Transformer.fromRgbaPixels(px, w, h).png());
}
const get = (ctx: TestContext, url: string, as?: TestUser, headers: Record<string, string> = {}) =>
  ctx.app.handle(new Request(`http://localhost${url}`, { headers: { ...(as ? { 'x-api-key': as.key } : {}), ...headers } }));

describe('assistant avatars', () => {
  test('set: a 128-pixel WebP at avatarUrl, for its owner only; replaced, then removed', async () => {
    const { ctx, ann, bob } = await setup();
    const a = (await ctx.json('assistants/create', { name: 'Painter' }, ann)).body.assistant;
    expect(a.avatarUrl).toBeNull();
    const set = await ctx.json('assistants/setAvatar', { assistantId: a.id, dataUrl: dataUrl(await widePng()) }, ann);
    expect(set.status).toBe(200);
    const url: string = set.body.assistant.avatarUrl;
    expect(url).toMatch(new RegExp(`^/api/assistants/${a.id}/avatar\\?v=[0-9a-f]{16}$`));
    expect((await ctx.json('assistants/get', { assistantId: a.id }, ann)).body.assistant.avatarUrl).toBe(url);

    const res = await get(ctx, url, ann);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    const img = new Transformer(new Uint8Array(await res.arrayBuffer()));
    const meta = await img.metadata();
    expect([meta.width, meta.height, meta.format]).toEqual([128, 128, 'webp']);
    // Cropped to the middle: both halves show.
    const px = await img.rawPixels();
    const at = (x: number) => [...px.subarray((64 * 128 + x) * 4, (64 * 128 + x) * 4 + 3)];
    expect(at(10)[0]).toBeGreaterThan(200);
    expect(at(118)[2]).toBeGreaterThan(200);
    // Cached by its ETag; nobody else's; no credential, 401.
    expect((await get(ctx, url, ann, { 'if-none-match': res.headers.get('etag')! })).status).toBe(304);
    expect((await get(ctx, url, bob)).status).toBe(404);
    expect((await get(ctx, url)).status).toBe(401);
    expect((await ctx.json('assistants/setAvatar', { assistantId: a.id, dataUrl: dataUrl(await widePng()) }, bob)).status).toBe(404);

    const other = await ctx.json('assistants/setAvatar', { assistantId: a.id, dataUrl: dataUrl(await widePng(100, 300)) }, ann);
    expect(other.body.assistant.avatarUrl).not.toBe(url);
    const removed = await ctx.json('assistants/removeAvatar', { assistantId: a.id }, ann);
    expect(removed.body.assistant.avatarUrl).toBeNull();
    expect((await get(ctx, url, ann)).status).toBe(404);
    expect(await ctx.count('assistant_avatars')).toBe(0);
  });

  test('a shared one: served to the users it is for, changed by admins only; gone with its assistant', async () => {
    const { ctx, admin, ann } = await setup();
    const a = (await ctx.json('assistants/create', { name: 'House', shared: true }, admin)).body.assistant;
    const url = (await ctx.json('assistants/setAvatar', { assistantId: a.id, dataUrl: dataUrl(await widePng()) }, admin)).body.assistant.avatarUrl;
    expect((await ctx.json('assistants/list', {}, ann)).body.assistants[0].avatarUrl).toBe(url);
    expect((await get(ctx, url, ann)).status).toBe(200);
    expect((await ctx.json('assistants/setAvatar', { assistantId: a.id, dataUrl: dataUrl(await widePng()) }, ann)).status).toBe(403);
    expect((await ctx.json('assistants/removeAvatar', { assistantId: a.id }, ann)).status).toBe(403);
    await ctx.json('assistants/update', { assistantId: a.id, visibility: 'tiers', tiers: ['PRO'] }, admin);
    expect((await get(ctx, url, ann)).status).toBe(404);
    await ctx.json('assistants/delete', { assistantId: a.id }, admin);
    expect(await ctx.count('assistant_avatars')).toBe(0);
  });

  test('refused as uploads are: not an image, too many pixels from the header, too many bytes; a bomb in a chunk is harmless', async () => {
    const { ctx, ann } = await setup({ imageMaxPixels: 1_000_000, imageMaxBytes: 200_000 });
    const a = (await ctx.json('assistants/create', { name: 'Strict' }, ann)).body.assistant;
    const refusal = async (url: string) => {
      const res = await ctx.json('assistants/setAvatar', { assistantId: a.id, dataUrl: url }, ann);
      expect(res.status).toBe(400);
      expect(res.body.data.issues[0].path).toEqual(['dataUrl']);
      return res.body.data.issues[0].message as string;
    };
    expect(await refusal('data:text/plain;base64,aGVsbG8=')).toContain('not an image');
    expect(await refusal(dataUrl(await widePng(2000, 1000)))).toContain('2000 × 1000 pixels');
    expect(await refusal(dataUrl(crypto.getRandomValues(new Uint8Array(210_000))))).toBe('The image is larger than 200000 bytes.');
    expect(await refusal('not a data url')).toBe('Expected a data URL: data:<type>;base64,<data>.');
    // 100 MB of zeros in an iCCP chunk: stripped before decoding, the picture itself is taken.
    const bomb = await ctx.json('assistants/setAvatar', { assistantId: a.id, dataUrl: dataUrl(iccpBomb(1e8)) }, ann);
    expect(bomb.status).toBe(200);
    expect(bomb.body.assistant.avatarUrl).not.toBeNull();
  });
});
