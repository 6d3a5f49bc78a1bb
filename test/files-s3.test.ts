/**
 * Files kept in an S3-compatible bucket (PARLEY_FILES_S3_*) through HTTP, on either store: the
 * bucket is test/fakes/s3.ts, a local server speaking S3's REST API and checking every request's
 * SigV4 signature, so Bun's own S3 client talks to it as it would to a real store. Upload
 * (single PUT, and multipart past 5 MiB), download with Range, thumbnails, one object for the
 * same bytes, deletion removing the object, documents fetched back for their text, and failures
 * of the store.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transformer } from '@napi-rs/image';
import { captureLog, createTestContext, until, type TestContext, type TestUser } from './helpers';
import { startFakeS3, type FakeS3 } from './fakes/s3';
import { makePdf } from './fixtures/documents';
import { s3ClientOptions } from '../src/files/blob-storage';
import { testConfig, type Config } from '../src/config';

setDefaultTimeout(60_000);

let s3: FakeS3;
const dirs: string[] = [];
beforeAll(() => {
  s3 = startFakeS3({ bucket: 'parley-files', accessKeyId: 'AKIDPARLEYTEST', secretAccessKey: 'the-secret' });
});
afterAll(() => {
  s3.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

let contexts = 0;
/** A fresh app whose files go to the fake bucket under a prefix of its own. */
async function setup(config: Partial<Config> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-files-s3-'));
  dirs.push(dataDir);
  const prefix = `test-${++contexts}/`;
  const { log, lines } = captureLog();
  const ctx = await createTestContext({
    users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }],
    log,
    config: {
      dataDir,
      filesS3Bucket: s3.bucket,
      filesS3Endpoint: s3.url,
      filesS3Region: 'eu-central-1',
      filesS3AccessKeyId: 'AKIDPARLEYTEST',
      filesS3SecretAccessKey: 'the-secret',
      filesS3Prefix: prefix,
      ...config,
    },
  });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  const objects = () => [...s3.objects.keys()].filter((k) => k.startsWith(prefix));
  const sent = () => s3.requests.filter((r) => r.key.startsWith(prefix));
  return { ctx, ann, bob, dataDir, prefix, objects, sent, lines };
}

function upload(ctx: TestContext, as: TestUser, bytes: Uint8Array | string, filename: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), filename);
  return ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as.key }, body: form }));
}

const get = (ctx: TestContext, path: string, as: TestUser, headers: Record<string, string> = {}) =>
  ctx.app.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': as.key, ...headers } }));

const png = (w = 300, h = 200) => {
  const pixels = new Uint8Array(w * h * 4);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7) % 256;
  return Transformer.fromRgbaPixels(pixels, w, h).pngSync();
};

/** Nothing of a file stays on local disk: the data directory holds only the (empty) temp folder. */
const localFiles = (dataDir: string) => readdirSync(join(dataDir, 'files'), { recursive: true }).map(String).filter((p) => p !== 'tmp');

describe('files in an S3-compatible bucket', () => {
  test('an image: its cleaned bytes and its thumbnail become two objects, signed with the configured key; downloads and ranges come from the bucket', async () => {
    const { ctx, ann, dataDir, prefix, objects, sent } = await setup();
    const res = await upload(ctx, ann, png(), 'photo.png');
    expect(res.status).toBe(200);
    const file = (await res.json()) as any;
    expect(file).toMatchObject({ kind: 'image', mimeType: 'image/png', width: 300, height: 200 });
    expect(objects().length).toBe(2);
    expect(localFiles(dataDir)).toEqual([]);
    expect(readdirSync(join(dataDir, 'files', 'tmp'))).toEqual([]);
    // Every request carried a valid SigV4 signature (the fake refuses others) of this key and region.
    expect(sent().length).toBeGreaterThan(0);
    expect(new Set(sent().map((r) => `${r.accessKeyId} ${r.region}`))).toEqual(new Set(['AKIDPARLEYTEST eu-central-1']));

    const content = await get(ctx, file.contentUrl, ann);
    expect(content.status).toBe(200);
    const bytes = new Uint8Array(await content.arrayBuffer());
    expect(bytes.length).toBe(file.size);
    const [stored] = objects().map((k) => s3.objects.get(k)!).filter((o) => o.length === file.size);
    expect(Buffer.compare(bytes, stored!)).toBe(0);
    expect(await new Transformer(bytes).metadata()).toMatchObject({ width: 300, height: 200 });

    const before = sent().length;
    const part = await get(ctx, file.contentUrl, ann, { range: 'bytes=100-199' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${file.size}`);
    expect(Buffer.compare(new Uint8Array(await part.arrayBuffer()), bytes.subarray(100, 200))).toBe(0);
    // The range was asked of the bucket, not cut from a whole download.
    expect(sent().slice(before)).toMatchObject([{ method: 'GET', range: 'bytes=100-199' }]);

    const thumb = await get(ctx, file.thumbnailUrl, ann);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    const t = await new Transformer(new Uint8Array(await thumb.arrayBuffer())).metadata();
    expect(Math.max(t.width, t.height)).toBeLessThanOrEqual(256);
    expect(objects().every((k) => k.startsWith(prefix))).toBe(true);
  });

  test('a document: fetched back from the bucket for its text, searchable; Range, suffix and past-the-end ranges', async () => {
    const { ctx, ann, bob, objects, sent } = await setup();
    const pdf = await makePdf([['The lighthouse keeper counted 4711 gulls.'], ['Page two: the fog came in at noon.']]);
    const res = await upload(ctx, ann, pdf, 'keeper.pdf');
    expect(res.status).toBe(200);
    const file = (await res.json()) as any;
    expect(file).toMatchObject({ kind: 'document', mimeType: 'application/pdf', textStatus: 'pending' });
    expect(objects().length).toBe(1);
    await ctx.deps.fileText.idle();
    expect((await ctx.json('files/getFile', { fileId: file.id }, ann)).body).toMatchObject({ textStatus: 'ready', textError: null });
    // The extraction read the object from the bucket (a whole GET of its key).
    expect(sent().some((r) => r.method === 'GET' && r.key === objects()[0] && r.range === null)).toBe(true);
    const hits = (await ctx.json('files/searchFiles', { query: 'gulls' }, ann)).body.hits;
    expect(hits).toMatchObject([{ fileId: file.id, filename: 'keeper.pdf', page: 1 }]);
    expect((await ctx.json('files/searchFiles', { query: 'gulls' }, bob)).body.hits).toEqual([]);

    const whole = await get(ctx, file.contentUrl, ann);
    expect(whole.headers.get('content-disposition')).toStartWith('attachment');
    expect(Buffer.compare(new Uint8Array(await whole.arrayBuffer()), pdf)).toBe(0);
    const head = await get(ctx, file.contentUrl, ann, { range: 'bytes=0-4' });
    expect([head.status, await head.text()]).toEqual([206, '%PDF-']);
    const suffix = await get(ctx, file.contentUrl, ann, { range: 'bytes=-6' });
    expect([suffix.status, suffix.headers.get('content-range')]).toEqual([206, `bytes ${pdf.length - 6}-${pdf.length - 1}/${pdf.length}`]);
    expect(Buffer.compare(new Uint8Array(await suffix.arrayBuffer()), pdf.subarray(pdf.length - 6))).toBe(0);
    const open = await get(ctx, file.contentUrl, ann, { range: `bytes=${pdf.length - 3}-` });
    expect(Buffer.compare(new Uint8Array(await open.arrayBuffer()), pdf.subarray(pdf.length - 3))).toBe(0);
    const past = await get(ctx, file.contentUrl, ann, { range: `bytes=${pdf.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${pdf.length}`);
    // Someone else's file: 404, and the bucket is not asked.
    const asked = sent().length;
    expect((await get(ctx, file.contentUrl, bob)).status).toBe(404);
    expect(sent().length).toBe(asked);
  });

  test('the same bytes are one object; it goes with the last file naming it', async () => {
    const { ctx, ann, bob, prefix, objects, sent } = await setup();
    const a = (await (await upload(ctx, ann, 'the same bytes, twice and thrice', 'a.txt')).json()) as any;
    const b = (await (await upload(ctx, bob, 'the same bytes, twice and thrice', 'b.txt')).json()) as any;
    const c = (await (await upload(ctx, ann, 'the same bytes, twice and thrice', 'c.txt')).json()) as any;
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
    expect(await ctx.count('file_blobs')).toBe(1);
    // Each upload wrote its own copy first; the later two removed theirs once the database said the bytes were there.
    expect(sent().filter((r) => r.method === 'PUT').length).toBe(3);
    expect(objects().length).toBe(1);
    const [key] = objects();
    // Named by the bytes' SHA-256 (and the moment they were first stored).
    expect(key).toStartWith(`${prefix}${new Bun.CryptoHasher('sha256').update('the same bytes, twice and thrice').digest('hex')}-`);

    for (const [f, who] of [[a, ann], [c, ann]] as const) expect((await ctx.json('files/deleteFile', { fileId: f.id }, who)).body).toEqual({ success: true });
    await ctx.deps.fileText.idle();
    expect(objects()).toEqual([key!]);
    expect(await (await get(ctx, b.contentUrl, bob)).text()).toBe('the same bytes, twice and thrice');
    await ctx.json('files/deleteFile', { fileId: b.id }, bob);
    await until(() => objects().length === 0, 'the object removed from the bucket');
    expect(await ctx.count('file_blobs')).toBe(0);
    expect(sent().filter((r) => r.method === 'DELETE').map((r) => r.key)).toContain(key!);
  });

  test('past 5 MiB the client uploads in parts; the object is whole and served back whole and in ranges', async () => {
    const { ctx, ann, objects, sent } = await setup({ filesMaxBytes: 8 * 1024 * 1024, maxBodyBytes: 9 * 1024 * 1024 });
    const line = 'A line of a long plain-text log, the same again and again.\n';
    const text = line.repeat(Math.ceil((6 * 1024 * 1024) / line.length));
    const res = await upload(ctx, ann, text, 'long.log');
    expect(res.status).toBe(200);
    const file = (await res.json()) as any;
    expect(file.size).toBe(text.length);
    // (The document's text extraction may be reading it back already: its GET is left out.)
    const writes = sent().filter((r) => r.method !== 'GET');
    expect(writes.map((r) => `${r.method} ${r.query.replace(/uploadId=[^&]+/, 'uploadId=…')}`)).toEqual([
      'POST ?uploads=',
      ...writes
        .filter((r) => r.query.includes('partNumber'))
        .map((r) => `PUT ${r.query.replace(/uploadId=[^&]+/, 'uploadId=…')}`),
      'POST ?uploadId=…',
    ]);
    expect(writes.filter((r) => r.query.includes('partNumber')).length).toBe(2);
    expect(s3.objects.get(objects()[0]!)!.length).toBe(text.length);
    const whole = await get(ctx, file.contentUrl, ann);
    expect(Number(whole.headers.get('content-length'))).toBe(text.length);
    expect(await whole.text()).toBe(text);
    const tail = await get(ctx, file.contentUrl, ann, { range: `bytes=${text.length - line.length}-` });
    expect(await tail.text()).toBe(line);
    await ctx.deps.fileText.idle();
  });

  test('a store that fails: the upload is refused and nothing is kept; a failed removal leaves the object, logged, never a row without its bytes', async () => {
    const { ctx, ann, objects, sent, lines } = await setup();
    s3.refuse = (r) => (r.method === 'PUT' ? 503 : undefined);
    const refused = await upload(ctx, ann, 'a note that cannot be stored', 'note.txt').finally(() => (s3.refuse = undefined));
    expect(refused.status).toBe(500);
    // Bun's client tries a 5xx again before giving up.
    expect(sent().filter((r) => r.method === 'PUT').length).toBeGreaterThan(1);
    expect(await refused.json()).toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
    expect(await ctx.count('files')).toBe(0);
    expect(await ctx.count('file_blobs')).toBe(0);
    expect(objects()).toEqual([]);

    const kept = (await (await upload(ctx, ann, 'a note that is stored', 'kept.txt')).json()) as any;
    expect(objects().length).toBe(1);
    s3.refuse = (r) => (r.method === 'DELETE' ? 500 : undefined);
    await ctx.json('files/deleteFile', { fileId: kept.id }, ann);
    await until(() => lines.some((l) => l.includes('could not be removed from storage')), 'the failed removal logged').finally(() => (s3.refuse = undefined));
    expect(await ctx.count('file_blobs')).toBe(0);
    expect(objects().length).toBe(1);
    await ctx.deps.fileText.idle();
  });

  test('a wrong secret is refused by the store (so the fake checks signatures): the upload fails, nothing is kept', async () => {
    const { ctx, ann, objects } = await setup({ filesS3SecretAccessKey: 'not-the-secret' });
    const res = await upload(ctx, ann, 'signed with the wrong secret', 'wrong.txt');
    expect(res.status).toBe(500);
    expect(await ctx.count('files')).toBe(0);
    expect(objects()).toEqual([]);
  });

  test('an object already gone is no failure, on a store that answers 404 for it', async () => {
    const { ctx, ann, objects, lines } = await setup();
    const file = (await (await upload(ctx, ann, 'removed behind Parley\'s back', 'gone.txt')).json()) as any;
    s3.objects.delete(objects()[0]!);
    s3.strictDelete = true;
    try {
      await ctx.json('files/deleteFile', { fileId: file.id }, ann);
      await until(async () => (await ctx.count('file_blobs')) === 0, 'the blob row swept');
      await Bun.sleep(100);
      expect(lines.filter((l) => l.includes('could not be removed'))).toEqual([]);
    } finally {
      s3.strictDelete = false;
    }
  });
});

describe('the bucket settings alone say where files go', () => {
  const base = { filesS3Bucket: 'b', filesS3AccessKeyId: 'k', filesS3SecretAccessKey: 's' };
  test('empty endpoint: AWS of the region (us-east-1 when none); an endpoint without a region: "auto"', () => {
    expect(s3ClientOptions(testConfig({ ...base, filesS3Region: 'eu-west-1' }))).toMatchObject({ endpoint: 'https://s3.eu-west-1.amazonaws.com', region: 'eu-west-1' });
    expect(s3ClientOptions(testConfig(base))).toMatchObject({ endpoint: 'https://s3.us-east-1.amazonaws.com', region: 'us-east-1' });
    expect(s3ClientOptions(testConfig({ ...base, filesS3Endpoint: 'http://127.0.0.1:9000' }))).toMatchObject({ endpoint: 'http://127.0.0.1:9000', region: 'auto' });
  });

  test("Bun's client does not take S3_ENDPOINT or AWS_REGION from the environment in their place", async () => {
    // Bun reads those variables when its process starts: a process of its own with them set.
    const script = `
      import { S3Client } from 'bun';
      import { s3ClientOptions, createBlobStorage } from ${JSON.stringify(join(import.meta.dir, '../src/files/blob-storage.ts'))};
      import { testConfig } from ${JSON.stringify(join(import.meta.dir, '../src/config.ts'))};
      const keys = { filesS3Bucket: ${JSON.stringify(s3.bucket)}, filesS3AccessKeyId: 'AKIDPARLEYTEST', filesS3SecretAccessKey: 'the-secret' };
      const aws = new S3Client(s3ClientOptions(testConfig({ ...keys, filesS3Region: 'eu-west-1' })));
      console.log(aws.presign('k').split('?')[0]);
      const storage = createBlobStorage(testConfig({ ...keys, dataDir: process.argv[1], filesS3Endpoint: ${JSON.stringify(s3.url)}, filesS3Prefix: 'env-test/' }));
      const temp = await storage.tempPath('one');
      await Bun.write(temp, 'bytes');
      await storage.put('one', temp);
    `;
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-files-s3-env-'));
    dirs.push(dataDir);
    // Not spawnSync: the fake answers from this process.
    const child = Bun.spawn([process.execPath, '-e', script, dataDir], {
      env: { ...process.env, S3_ENDPOINT: 'http://127.0.0.1:9', AWS_ENDPOINT: 'http://127.0.0.1:9', AWS_REGION: 'mars-north-1', S3_REGION: 'mars-north-1' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect(err).toBe('');
    expect(out.trim()).toBe(`https://s3.eu-west-1.amazonaws.com/${s3.bucket}/k`);
    expect(s3.requests.filter((r) => r.key === 'env-test/one')).toMatchObject([{ method: 'PUT', region: 'auto' }]);
  });
});
