/**
 * Files through HTTP on a real database (either store): upload as multipart, the type sniffed
 * from the bytes, images re-encoded without their metadata, quotas, list, metadata, download
 * with Range and ETag, thumbnails, deletion, and who may read what.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transformer } from '@napi-rs/image';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { createConversation, addWriter } from '../src/chat/conversation.store';
import { attachFiles } from '../src/files/file.store';
import type { Config } from '../src/config';
import { sweepBlobs } from '../src/files/sweep-blobs';
import { sql } from 'drizzle-orm';
import { groupWith } from './group-helpers';
import { buildGif } from './fixtures/gif';

setDefaultTimeout(30_000);

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function setup(config: Partial<Config> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-files-'));
  dirs.push(dataDir);
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { dataDir, ...config } });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob, dataDir };
}

function upload(ctx: TestContext, as: TestUser | undefined, bytes: Uint8Array | string, filename = 'file.bin', type = 'application/octet-stream') {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), filename);
  return ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: as ? { 'x-api-key': as.key } : {}, body: form }));
}

const get = (ctx: TestContext, path: string, as?: TestUser, headers: Record<string, string> = {}) =>
  ctx.app.handle(new Request(`http://localhost${path}`, { headers: { ...(as ? { 'x-api-key': as.key } : {}), ...headers } }));

/** A real image: `w` × `h` pixels of colour. */
const png = (w = 40, h = 30) => new Transformer(Transformer.fromRgbaPixels(new Uint8Array(w * h * 4).fill(200), w, h).pngSync()).pngSync();

/**
 * A JPEG carrying an EXIF block with a GPS position and a camera owner's name, as a phone's
 * photo does: an APP1 segment spliced in after SOI.
 */
function jpegWithGps(): Uint8Array {
  const jpeg = Transformer.fromRgbaPixels(new Uint8Array(64 * 48 * 4).fill(90), 64, 48).jpegSync(90);
  const secret = new TextEncoder().encode('GPSLatitude 48.8584N OwnerName Ann Example');
  const tiff = new Uint8Array([0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 0, ...secret]);
  const payload = new Uint8Array([...new TextEncoder().encode('Exif\0\0'), ...tiff]);
  const len = payload.length + 2;
  return new Uint8Array([0xff, 0xd8, 0xff, 0xe1, len >> 8, len & 0xff, ...payload, ...jpeg.subarray(2)]);
}

const has = (bytes: Uint8Array, text: string) => Buffer.from(bytes).includes(text);

describe('files', () => {
  test('upload an image: sniffed, re-encoded without its EXIF (GPS), with a thumbnail; the answer describes it', async () => {
    const { ctx, ann } = await setup();
    const photo = jpegWithGps();
    expect(has(photo, 'GPSLatitude')).toBe(true);
    // Declared as text and named .txt: the bytes decide.
    const res = await upload(ctx, ann, photo, 'IMG_0001.txt', 'text/plain');
    expect(res.status).toBe(200);
    const file = (await res.json()) as any;
    expect(file).toMatchObject({ filename: 'IMG_0001.txt', mimeType: 'image/jpeg', kind: 'image', width: 64, height: 48, source: 'upload', textStatus: 'none' });
    expect(file.contentUrl).toBe(`/api/files/${file.id}/content`);
    expect(file.thumbnailUrl).toBe(`/api/files/${file.id}/thumbnail`);
    const content = await get(ctx, file.contentUrl, ann);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('image/jpeg');
    expect(content.headers.get('content-disposition')).toStartWith('inline');
    const bytes = new Uint8Array(await content.arrayBuffer());
    expect(bytes.length).toBe(file.size);
    expect(has(bytes, 'GPSLatitude')).toBe(false);
    expect(has(bytes, 'Exif')).toBe(false);
    expect(has(bytes, 'Ann Example')).toBe(false);
    const meta = await new Transformer(bytes).metadata();
    expect([meta.width, meta.height]).toEqual([64, 48]);
    const thumb = await get(ctx, file.thumbnailUrl, ann);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    const t = await new Transformer(new Uint8Array(await thumb.arrayBuffer())).metadata();
    expect(Math.max(t.width, t.height)).toBeLessThanOrEqual(256);
  });

  test('documents: sniffed from their bytes (PDF, DOCX-less zip refused, HTML, JSON, Markdown and CSV by name among text), text pending', async () => {
    const { ctx, ann } = await setup();
    const cases: [string | Uint8Array, string, string][] = [
      ['%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF', 'report.bin', 'application/pdf'],
      ['<!DOCTYPE html><html><body><p>hi</p></body></html>', 'page.txt', 'text/html'],
      ['{"a": [1, 2, 3]}', 'data.txt', 'application/json'],
      ['# Title\n\nSome *Markdown*.', 'notes.md', 'text/markdown'],
      ['a,b,c\n1,2,3\n', 'table.csv', 'text/csv'],
      ['Grüße aus Köln: plain text.', 'note.pdf', 'text/plain'],
    ];
    for (const [bytes, name, mime] of cases) {
      const res = await upload(ctx, ann, bytes, name, 'image/png');
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      expect(await res.json()).toMatchObject({ filename: name, mimeType: mime, kind: 'document', textStatus: 'pending', thumbnailUrl: null });
    }
    const html = (await ctx.json('files/listFiles', { kind: 'document' }, ann)).body.files.find((f: any) => f.mimeType === 'text/html');
    const served = await get(ctx, html.contentUrl, ann);
    // An uploaded page never runs as a page of Parley's origin.
    expect(served.headers.get('content-disposition')).toStartWith('attachment');
    expect(served.headers.get('content-security-policy')).toContain('sandbox');
  });

  test('refusals: not multipart, no file part, empty, unknown bytes, a zip that is no DOCX, a decompression-bomb image, no credential', async () => {
    const { ctx, ann, dataDir } = await setup();
    const notMultipart = await ctx.call('files/upload', {}, ann);
    expect(notMultipart.status).toBe(415);
    expect(((await notMultipart.json()) as any).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const form = new FormData();
    form.append('other', 'x');
    const noFile = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': ann.key }, body: form }));
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as any).message).toContain('"file"');
    expect((await upload(ctx, ann, new Uint8Array(0))).status).toBe(400);
    const binary = await upload(ctx, ann, new Uint8Array([0, 1, 2, 3, 0, 255, 254, 0]), 'x.png', 'image/png');
    expect(binary.status).toBe(415);
    expect(((await binary.json()) as any).message).toContain('decided from its content');
    const zip = new Uint8Array([0x50, 0x4b, 3, 4, ...new TextEncoder().encode('notes/readme.txt'), 0, 0, 0]);
    expect((await upload(ctx, ann, zip, 'x.docx')).status).toBe(415);
    // A PNG header declaring 60000 × 60000 pixels: refused from the header, never decoded.
    const bomb = png(8, 8);
    new DataView(bomb.buffer, bomb.byteOffset).setUint32(16, 60000);
    new DataView(bomb.buffer, bomb.byteOffset).setUint32(20, 60000);
    const refused = await upload(ctx, ann, bomb, 'bomb.png');
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).message).toContain('60000 × 60000');
    expect((await upload(ctx, undefined, png())).status).toBe(401);
    expect(await ctx.count('files')).toBe(0);
    expect(await ctx.count('file_blobs')).toBe(0);
    // Nothing left behind on disk by the refusals.
    expect(readdirSync(join(dataDir, 'files', 'tmp'))).toEqual([]);
  });

  test('size and quotas: too big is 413 and keeps nothing; the count and the bytes quota are 409 with reason quota', async () => {
    const { ctx, ann, bob, dataDir } = await setup({ filesMaxBytes: 2000, filesMaxPerUser: 2, filesQuotaBytes: 1500 });
    const big = await upload(ctx, ann, 'x'.repeat(5000), 'big.txt');
    expect(big.status).toBe(413);
    expect(((await big.json()) as any).message).toContain('2000');
    expect(readdirSync(join(dataDir, 'files', 'tmp'))).toEqual([]);
    expect((await upload(ctx, ann, 'a'.repeat(1000), 'a.txt')).status).toBe(200);
    const overBytes = await upload(ctx, ann, 'b'.repeat(600), 'b.txt');
    expect(overBytes.status).toBe(409);
    expect(await overBytes.json()).toMatchObject({ code: 'CONFLICT', data: { reason: 'quota' } });
    expect((await upload(ctx, ann, 'c'.repeat(100), 'c.txt')).status).toBe(200);
    const overCount = await upload(ctx, ann, 'd', 'd.txt');
    expect(overCount.status).toBe(409);
    expect(((await overCount.json()) as any).message).toContain('PARLEY_FILES_MAX_PER_USER');
    // Quotas are per user.
    expect((await upload(ctx, bob, 'e'.repeat(1000), 'e.txt')).status).toBe(200);
  });

  test('list (paged, by kind), get, download with Range and ETag', async () => {
    const { ctx, ann } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await (await upload(ctx, ann, `document number ${i}`, `d${i}.txt`)).json() as any).id);
    const image = await (await upload(ctx, ann, png(), 'p.png')).json() as any;
    const page1 = (await ctx.json('files/listFiles', { limit: 4 }, ann)).body;
    expect(page1.files.map((f: any) => f.id)).toEqual([image.id, ids[4], ids[3], ids[2]]);
    const page2 = (await ctx.json('files/listFiles', { limit: 4, before: page1.nextBefore }, ann)).body;
    expect(page2.files.map((f: any) => f.id)).toEqual([ids[1], ids[0]]);
    expect(page2.nextBefore).toBeNull();
    expect((await ctx.json('files/listFiles', { kind: 'image' }, ann)).body.files.map((f: any) => f.id)).toEqual([image.id]);
    expect((await ctx.json('files/getFile', { fileId: ids[2] }, ann)).body).toMatchObject({ id: ids[2], filename: 'd2.txt', size: 17 });

    const url = `/api/files/${ids[2]}/content`;
    const whole = await get(ctx, url, ann);
    expect(await whole.text()).toBe('document number 2');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const etag = whole.headers.get('etag')!;
    const part = await get(ctx, url, ann, { range: 'bytes=9-14' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 9-14/17');
    expect(await part.text()).toBe('number');
    const suffix = await get(ctx, url, ann, { range: 'bytes=-1' });
    expect([suffix.status, await suffix.text()]).toEqual([206, '2']);
    const open = await get(ctx, url, ann, { range: 'bytes=16-' });
    expect([open.status, await open.text()]).toEqual([206, '2']);
    const past = await get(ctx, url, ann, { range: 'bytes=17-' });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe('bytes */17');
    expect(((await past.json()) as any).code).toBe('RANGE_NOT_SATISFIABLE');
    expect((await get(ctx, url, ann, { 'if-none-match': etag })).status).toBe(304);
    // A document has no thumbnail.
    expect((await get(ctx, `/api/files/${ids[2]}/thumbnail`, ann)).status).toBe(404);
    // HEAD gives the headers only; another method is 405.
    const head = await ctx.app.handle(new Request(`http://localhost${url}`, { method: 'HEAD', headers: { 'x-api-key': ann.key } }));
    expect(head.status).toBe(200);
    const post = await ctx.app.handle(new Request(`http://localhost${url}`, { method: 'POST', headers: { 'x-api-key': ann.key } }));
    expect(post.status).toBe(405);
  });

  test("access: someone else's file is 404 everywhere; a writer of a conversation it is attached to may read it but not delete it", async () => {
    const { ctx, ann, bob } = await setup();
    const file = await (await upload(ctx, ann, 'secret plans', 'plans.txt')).json() as any;
    expect((await ctx.json('files/getFile', { fileId: file.id }, bob)).status).toBe(404);
    expect((await get(ctx, file.contentUrl, bob)).status).toBe(404);
    expect((await get(ctx, file.contentUrl)).status).toBe(401);
    expect((await get(ctx, file.contentUrl, undefined, { 'x-api-key': 'nope' })).status).toBe(401);
    expect((await ctx.json('files/deleteFile', { fileId: file.id }, bob)).status).toBe(404);
    expect((await ctx.json('files/listFiles', {}, bob)).body.files).toEqual([]);

    const conv = await ctx.store.write((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Plans' }));
    await ctx.store.write((tx) => attachFiles(tx, [file.id], conv.id, Date.now()));
    await ctx.store.write((tx) => addWriter(tx, conv.id, bob.user.id));
    expect((await ctx.json('files/getFile', { fileId: file.id }, bob)).status).toBe(200);
    expect(await (await get(ctx, file.contentUrl, bob)).text()).toBe('secret plans');
    expect((await ctx.json('files/deleteFile', { fileId: file.id }, bob)).status).toBe(403);
    // Not Bob's own file: it stays out of his list.
    expect((await ctx.json('files/listFiles', {}, bob)).body.files).toEqual([]);
  });

  test('the same bytes are stored once; they go when the last file naming them does', async () => {
    const { ctx, ann, bob, dataDir } = await setup();
    const storedFiles = () => readdirSync(join(dataDir, 'files'), { recursive: true }).filter((p) => String(p).split('/').length === 3 && !String(p).startsWith('tmp'));
    const a = await (await upload(ctx, ann, 'same bytes', 'a.txt')).json() as any;
    const b = await (await upload(ctx, bob, 'same bytes', 'b.txt')).json() as any;
    const c = await (await upload(ctx, ann, 'same bytes', 'c.txt')).json() as any;
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
    expect(await ctx.count('file_blobs')).toBe(1);
    expect(storedFiles().length).toBe(1);
    expect((await ctx.json('files/deleteFile', { fileId: a.id }, ann)).body).toEqual({ success: true });
    expect((await ctx.json('files/getFile', { fileId: a.id }, ann)).status).toBe(404);
    expect(await (await get(ctx, c.contentUrl, ann)).text()).toBe('same bytes');
    await ctx.json('files/deleteFile', { fileId: c.id }, ann);
    expect(await (await get(ctx, b.contentUrl, bob)).text()).toBe('same bytes');
    await ctx.json('files/deleteFile', { fileId: b.id }, bob);
    await Bun.sleep(50); // the sweep runs after the answer
    expect(await ctx.count('file_blobs')).toBe(0);
    expect(storedFiles()).toEqual([]);
  });
});

describe('what an upload may carry', () => {
  test('a file name loses bidi controls and other invisible format characters; joiners and the rest stay', async () => {
    const { ctx, ann } = await setup();
    const names: [string, string][] = [
      ['invoice\u202efdp.exe', 'invoicefdp.exe'],
      ['a\u2066b\u2069\u200e\u200f\u061cc.txt', 'abc.txt'],
      ['\u200bzero\ufeff\u2060width\u00ad.md', 'zerowidth.md'],
      ['tag\u{e0041}\u2028line\u2029.txt', 'tagline.txt'],
      ['\u0085\u009f\u0007bell.txt', 'bell.txt'],
      ['👩\u200d👩\u200d👧 family.txt', '👩\u200d👩\u200d👧 family.txt'],
      ['می\u200cخواهم.txt', 'می\u200cخواهم.txt'],
      ['\u202e\u202e', 'upload'],
    ];
    for (const [sent, kept] of names) {
      const res = await upload(ctx, ann, `bytes of ${kept}`, sent);
      expect({ sent, status: res.status }).toEqual({ sent, status: 200 });
      const file = (await res.json()) as any;
      expect({ sent, filename: file.filename }).toEqual({ sent, filename: kept });
      expect((await get(ctx, file.contentUrl, ann)).headers.get('content-disposition')).toBe(`attachment; filename*=UTF-8''${encodeURIComponent(kept)}`);
    }
  });

  test('one file an upload: a second file part, under the same name or another, is a 400 and nothing is kept', async () => {
    const { ctx, ann, dataDir } = await setup();
    for (const second of ['file', 'other']) {
      const form = new FormData();
      form.append('file', new Blob(['first']), 'a.txt');
      form.append(second, new Blob(['second']), 'b.txt');
      const res = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': ann.key }, body: form }));
      expect({ second, status: res.status }).toEqual({ second, status: 400 });
      expect(((await res.json()) as any).message).toBe('Send one file, in a part named "file".');
    }
    expect(await ctx.count('files')).toBe(0);
    expect(readdirSync(join(dataDir, 'files', 'tmp'))).toEqual([]);
  });

  test("a post with the session cookie must come from this server's pages: no Origin, another, null, or Sec-Fetch-Site cross-site or same-site is 403", async () => {
    const { ctx, ann } = await setup();
    const post = (headers: Record<string, string>) => {
      const form = new FormData();
      form.append('file', new Blob(['notes']), 'n.txt');
      return ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers, body: form }));
    };
    const session = { cookie: `parley_session=${ann.token}` };
    const refused: Record<string, string>[] = [{}, { origin: 'https://evil.example' }, { origin: 'null' }, { origin: 'http://localhost', 'sec-fetch-site': 'cross-site' }, { origin: 'http://localhost', 'sec-fetch-site': 'same-site' }];
    for (const headers of refused) {
      const res = await post({ ...session, ...headers });
      expect({ headers, status: res.status }).toEqual({ headers, status: 403 });
    }
    expect(await ctx.count('files')).toBe(0);
    expect((await post({ ...session, origin: 'http://localhost', 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await post({ ...session, origin: 'http://localhost' })).status).toBe(200);
    // An API key is no browser's: no Origin asked.
    expect((await post({ 'x-api-key': ann.key })).status).toBe(200);
  });

  test("a GIF is kept as sent, with its own size, and a thumbnail made from its first frame shrunk in the decoder", async () => {
    const { ctx, ann } = await setup();
    // Left half blue, right half red: 1024 × 512, larger than the decoder's 512-pixel side for thumbnails.
    const width = 1024;
    const height = 512;
    const indices = Uint8Array.from({ length: width * height }, (_, i) => (i % width < width / 2 ? 0 : 1));
    const gif = buildGif({ width, height, palette: [[0, 0, 255], [255, 0, 0]], indices });
    const file = (await (await upload(ctx, ann, gif, 'halves.gif')).json()) as any;
    expect(file).toMatchObject({ mimeType: 'image/gif', width, height });
    expect(Buffer.from(await (await get(ctx, file.contentUrl, ann)).arrayBuffer()).equals(Buffer.from(gif))).toBe(true);
    const thumb = new Transformer(new Uint8Array(await (await get(ctx, file.thumbnailUrl, ann)).arrayBuffer()));
    const meta = await thumb.metadata();
    expect([meta.width, meta.height]).toEqual([256, 128]);
    const px = await thumb.rawPixels();
    const channels = px.length / (256 * 128);
    const at = (x: number, y: number) => [...px.subarray((y * 256 + x) * channels, (y * 256 + x) * channels + 3)];
    const near = (got: number[], want: number[]) => got.every((v, i) => Math.abs(v - want[i]!) < 16);
    expect(near(at(40, 64), [0, 0, 255])).toBe(true);
    expect(near(at(216, 64), [255, 0, 0])).toBe(true);
  });

  test('a document is read in its turn with the image decodes (PARLEY_IMAGE_CONCURRENCY): not while one holds the turn', async () => {
    const { ctx, ann } = await setup();
    const release = await ctx.deps.imageConversions.acquire();
    const doc = (await (await upload(ctx, ann, 'words to be read', 'words.txt')).json()) as any;
    await Bun.sleep(300);
    expect((await ctx.json('files/getFile', { fileId: doc.id }, ann)).body.textStatus).toBe('pending');
    release();
    await ctx.deps.fileText.idle();
    expect((await ctx.json('files/getFile', { fileId: doc.id }, ann)).body.textStatus).toBe('ready');
  });
});

describe('passing a file on (docs/files.md, "Access")', () => {
  test('a group member reads a file posted in the group and may send it again there, but not into a conversation of their own; leaving the group ends the access', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-files-'));
    dirs.push(dataDir);
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }, { email: 'cat@example.org' }], config: { dataDir } });
    const [ann, bob, cat] = ctx.users as [TestUser, TestUser, TestUser];
    const group = await groupWith(ctx, ann, [bob]);
    const file = (await (await upload(ctx, ann, 'the itinerary', 'trip.txt')).json()) as any;
    // Without an AI provider the turn ends at once; the message and its file stay in the group.
    const stream = (body: object, as: TestUser) => ctx.call('chat/stream', body, as).then(async (res) => ({ status: res.status, text: await res.text() }));
    expect((await stream({ conversationId: group.conversationId, message: 'Here it is', files: [file.id] }, ann)).status).toBe(200);
    expect(await (await get(ctx, file.contentUrl, bob)).text()).toBe('the itinerary');

    // Bob cannot carry it into a conversation of his own, a new one or one he has.
    const mine = await ctx.store.write((tx) => createConversation(tx, { ownerId: bob.user.id, title: 'Mine' }));
    for (const body of [{ message: 'keep this', files: [file.id] }, { conversationId: mine.id, message: 'keep this', files: [file.id] }]) {
      const refused = await stream(body, bob);
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.text).data.issues).toEqual([{ path: ['files', 0], message: expect.stringContaining('the conversation it came through') }]);
    }
    expect(await ctx.count('file_attachments')).toBe(1);
    // Nor can sharing hand it on: his conversation never got it, so a writer he adds reads nothing.
    await ctx.store.write((tx) => addWriter(tx, mine.id, cat.user.id));
    expect((await ctx.json('files/getFile', { fileId: file.id }, cat)).status).toBe(404);
    // In the group, where it came from, he may send it again.
    expect((await stream({ conversationId: group.conversationId, message: 'Look again', files: [file.id] }, bob)).status).toBe(200);

    expect((await ctx.json('groupChat/leaveGroup', { groupChatId: group.id }, bob)).status).toBe(200);
    expect((await ctx.json('files/getFile', { fileId: file.id }, bob)).status).toBe(404);
    expect((await get(ctx, file.contentUrl, bob)).status).toBe(404);
    expect((await stream({ message: 'and now?', files: [file.id] }, bob)).status).toBe(400);
    // The owner keeps it, and may send it anywhere she writes.
    expect(await (await get(ctx, file.contentUrl, ann)).text()).toBe('the itinerary');
    expect((await stream({ message: 'For my own notes', files: [file.id] }, ann)).status).toBe(200);
  });
});

describe('lifecycle', () => {
  test("deleting a conversation detaches its files, which stay their owner's; deleting a user deletes their files, and the sweep their bytes", async () => {
    const { ctx, ann, bob, dataDir } = await setup();
    const storedFiles = () => readdirSync(join(dataDir, 'files'), { recursive: true }).filter((p) => String(p).split('/').length === 3 && !String(p).startsWith('tmp'));
    const file = (await (await upload(ctx, ann, 'kept after the chat', 'kept.txt')).json()) as any;
    const conv = await ctx.store.write((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Chat' }));
    await ctx.store.write((tx) => attachFiles(tx, [file.id], conv.id, Date.now()));
    await ctx.store.write((tx) => addWriter(tx, conv.id, bob.user.id));
    expect((await ctx.json('files/getFile', { fileId: file.id }, bob)).status).toBe(200);
    expect((await ctx.json('chat/deleteConversation', { conversationId: conv.id }, ann)).status).toBe(200);
    expect(await ctx.count('file_attachments')).toBe(0);
    expect((await ctx.json('files/getFile', { fileId: file.id }, ann)).status).toBe(200);
    expect((await ctx.json('files/getFile', { fileId: file.id }, bob)).status).toBe(404);

    // A user's deletion (no operation does it yet; an admin's SQL or a future one) cascades to their files.
    await (await upload(ctx, ann, png(), 'p.png')).json();
    await ctx.deps.fileText.idle();
    expect(storedFiles().length).toBe(3); // the text, the image and its thumbnail
    await ctx.query(sql`DELETE FROM users WHERE id = ${ann.user.id}`);
    expect(await ctx.count('files')).toBe(0);
    expect(await sweepBlobs(ctx.deps)).toBe(3);
    expect(storedFiles()).toEqual([]);
  });
});

describe('the same bytes in the same millisecond', () => {
  test('two uploads of identical bytes at one instant share one stored copy, and a refused third keeps it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-files-'));
    dirs.push(dataDir);
    const ctx = await createTestContext({
      users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }],
      config: { dataDir, filesQuotaBytes: 39 },
      now: () => 1_800_000_000_000,
    });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const a = (await (await upload(ctx, ann, 'twenty bytes of text', 'a.txt')).json()) as any;
    const b = (await (await upload(ctx, bob, 'twenty bytes of text', 'b.txt')).json()) as any;
    // Over Ann's quota: refused after its bytes were stored under the same key as the first copy.
    expect((await upload(ctx, ann, 'twenty bytes of text and more', 'c.txt')).status).toBe(409);
    expect((await upload(ctx, ann, 'twenty bytes of text', 'd.txt')).status).toBe(409);
    expect(await (await get(ctx, a.contentUrl, ann)).text()).toBe('twenty bytes of text');
    expect(await (await get(ctx, b.contentUrl, bob)).text()).toBe('twenty bytes of text');
  });
});

describe('documents into text', () => {
  test('a PDF, a Markdown file and a DOCX-less text are extracted after the upload, chunked and searchable; only by their owner', async () => {
    const { PDFDocument, StandardFonts } = await import('pdf-lib');
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    for (const words of ['The quarterly harvest of marmalade oranges', 'Page two speaks of zeppelins over Lisbon']) pdf.addPage().drawText(words, { x: 50, y: 700, size: 14, font });
    const { ctx, ann, bob } = await setup();
    const report = (await (await upload(ctx, ann, await pdf.save(), 'report.pdf')).json()) as any;
    const notes = (await (await upload(ctx, ann, '# Notes\n\nThe zeppelins were grey.', 'notes.md')).json()) as any;
    expect(report.textStatus).toBe('pending');
    await ctx.deps.fileText.idle();
    const ready = (await ctx.json('files/getFile', { fileId: report.id }, ann)).body;
    expect(ready).toMatchObject({ textStatus: 'ready', textError: null });
    const hits = (await ctx.json('files/searchFiles', { query: 'zeppelins' }, ann)).body.hits;
    expect(hits.map((h: any) => h.fileId).sort()).toEqual([report.id, notes.id].sort());
    expect(hits.find((h: any) => h.fileId === report.id)).toMatchObject({ filename: 'report.pdf', page: 1 });
    expect((await ctx.json('files/searchFiles', { query: 'marmalade' }, ann)).body.hits.map((h: any) => h.fileId)).toEqual([report.id]);
    // Someone else's documents are not searched.
    expect((await ctx.json('files/searchFiles', { query: 'zeppelins' }, bob)).body.hits).toEqual([]);
    // Deleting the file deletes its chunks (and their index).
    await ctx.json('files/deleteFile', { fileId: report.id }, ann);
    expect((await ctx.json('files/searchFiles', { query: 'marmalade' }, ann)).body.hits).toEqual([]);
  });

  test('a document that cannot be read ends as failed, with the reason', async () => {
    const { ctx, ann } = await setup();
    const broken = (await (await upload(ctx, ann, '%PDF-1.7\nthis is no PDF at all', 'broken.pdf')).json()) as any;
    await ctx.deps.fileText.idle();
    const file = (await ctx.json('files/getFile', { fileId: broken.id }, ann)).body;
    expect(file.textStatus).toBe('failed');
    expect(file.textError.length).toBeGreaterThan(5);
    expect(await ctx.count('file_chunks')).toBe(0);
  });
});
