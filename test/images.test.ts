import { beforeAll, describe, expect, spyOn, test, setDefaultTimeout } from 'bun:test';
import { Transformer } from '@napi-rs/image';
import { createTestContext, SPEC_ERRORS } from './helpers';
import { readImageHeader } from '../src/images/image-header';
import fc from 'fast-check';
import { decodeGifFirstFrame, GifDecodeError } from '../src/images/gif';
import { buildGif } from './fixtures/gif';
import { createTurnstile, type Turnstile } from '../src/http/turnstile';
import { deflateSync } from 'node:zlib';
import { stripIcoChunks, stripPngChunks } from '../src/images/strip-compressed-chunks';
import { iccpBomb, icoOf, itxtBomb, pngChunk, zeroPng, ztxtBomb } from './support/image-bombs';

// Generous: the suite shares small machines with other work; these tests make many requests.
setDefaultTimeout(30_000);

// Fixtures are made here: @napi-rs/image encodes what it can; GIF (no encoder) is written by hand.

const W = 6;
const H = 4;
/** Left half opaque red, right half fully transparent (whose hidden colour is blue). */
function rgba(w = W, h = H): Uint8Array {
  const px = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 4;
      if (x < w / 2) px.set([255, 0, 0, 255], i);
      else px.set([0, 0, 255, 0], i);
    }
  return px;
}
const source = () => Transformer.fromRgbaPixels(rgba(), W, H);
const noise = (w: number, h: number) => Transformer.fromRgbaPixels(crypto.getRandomValues(new Uint8Array(w * h * 4)).map((v, i) => (i % 4 === 3 ? 255 : v)), w, h);

const dataUrl = (bytes: Uint8Array, type = 'application/octet-stream') => `data:${type};base64,${Buffer.from(bytes).toString('base64')}`;

/** A 1×1 two-frame GIF: frame 1 red (palette 0), frame 2 black (palette 1). LZW by hand, min code size 2. */
function twoFrameGif(screenW = 1, screenH = 1): Uint8Array {
  const le16 = (n: number) => [n & 0xff, n >> 8];
  return new Uint8Array([
    ...Buffer.from('GIF89a'), ...le16(screenW), ...le16(screenH), 0x80, 0, 0, // global table of 2 colours
    0xff, 0, 0, 0, 0, 0, // red, black
    0x21, 0xf9, 4, 0, 10, 0, 0, 0, // graphic control: 0.1 s
    0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0, // frame 1: clear, 0, end
    0x21, 0xf9, 4, 0, 10, 0, 0, 0,
    0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4c, 0x01, 0, // frame 2: clear, 1, end
    0x3b,
  ]);
}

/** A PNG that is only a signature and an IHDR claiming the given size (CRC not even valid). */
function pngHeaderOnly(w: number, h: number): Uint8Array {
  const b = new Uint8Array(8 + 25 + 20);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const v = new DataView(b.buffer);
  v.setUint32(8, 13);
  b.set(Buffer.from('IHDR'), 12);
  v.setUint32(16, w);
  v.setUint32(20, h);
  b.set([8, 6, 0, 0, 0], 24);
  return b;
}

/** Insert an EXIF APP1 segment with the given orientation right after a JPEG's SOI. */
function withExifOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const tiff = [0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0, 0, 0, 0, 0];
  const payload = [...Buffer.from('Exif\0\0', 'latin1'), ...tiff];
  const len = payload.length + 2;
  return new Uint8Array([0xff, 0xd8, 0xff, 0xe1, len >> 8, len & 0xff, ...payload, ...jpeg.subarray(2)]);
}

const decode = async (url: string) => {
  const bytes = Buffer.from(url.slice('data:image/jpeg;base64,'.length), 'base64');
  const t = new Transformer(bytes);
  const meta = await t.metadata();
  return { meta, pixels: await new Transformer(bytes).rawPixels() };
};

let fixtures: Record<string, Uint8Array>;
beforeAll(async () => {
  fixtures = {
    png: await source().png(),
    jpeg: await source().jpeg(95),
    webp: await source().webpLossless(),
    webpLossy: await source().webp(90),
    avif: await source().avif({ quality: 90, speed: 10 }),
    bmp: await source().bmp(),
    tiff: await source().tiff(),
    ico: await source().ico(),
    pnm: await source().pnm(),
    gif: twoFrameGif(),
  };
});

describe('image header sniffer', () => {
  test('reads format and size of every fixture without decoding', () => {
    for (const [name, bytes] of Object.entries(fixtures)) {
      const h = readImageHeader(bytes);
      const format = name === 'webpLossy' ? 'webp' : name;
      expect({ name, ...h }).toEqual({ name, format: format as any, width: name === 'gif' ? 1 : W, height: name === 'gif' ? 1 : H, channelBytes: 1 });
    }
    expect(readImageHeader(pngHeaderOnly(100_000, 100_000))).toEqual({ format: 'png', width: 100_000, height: 100_000, channelBytes: 1 });
    expect(readImageHeader(new TextEncoder().encode('just some text here'))).toBeUndefined();
  });
});

describe('images/convertImage', () => {
  test('every format converts to JPEG with its original format named', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    for (const [name, bytes] of Object.entries(fixtures)) {
      const res = await ctx.json('images/convertImage', { dataUrl: dataUrl(bytes) }, ctx.users[0]);
      expect(res.status).toBe(200);
      expect({ name, success: res.body.success, originalFormat: res.body.originalFormat }).toEqual({
        name,
        success: true,
        originalFormat: name === 'webpLossy' ? 'webp' : name,
      });
      expect(res.body.dataUrl.startsWith('data:image/jpeg;base64,/9j/')).toBe(true);
      const { meta } = await decode(res.body.dataUrl);
      expect(meta.format).toBe('jpeg');
      expect([meta.width, meta.height]).toEqual(name === 'gif' ? [1, 1] : [W, H]);
    }
  });

  test('transparency is flattened onto white; opaque pixels keep their colour', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    for (const name of ['png', 'webp', 'tiff', 'bmp']) {
      const res = await ctx.json('images/convertImage', { dataUrl: dataUrl(fixtures[name]!) }, ctx.users[0]);
      const { pixels, meta } = await decode(res.body.dataUrl);
      const ch = pixels.length / (meta.width * meta.height);
      const at = (x: number, y: number) => [...pixels.subarray((y * meta.width + x) * ch, (y * meta.width + x) * ch + 3)];
      const [r, g, b] = at(0, 1);
      expect(r).toBeGreaterThan(200);
      expect(g! + b!).toBeLessThan(80);
      expect(at(W - 1, 1).every((c) => c > 230)).toBe(true); // white, not the hidden blue
    }
  });

  // 16 × 16 fills the eight-word AND exactly; 5 × 3 leaves a tail of seven words; 300 × 300
  // spans two 65,536-word blocks, its transparent pixel in the second.
  test.each([
    [16, 16],
    [5, 3],
    [300, 300],
  ])('an RGBA image opaque everywhere keeps its colours; one transparent pixel, even the last, is still flattened (%i × %i)', async (w, h) => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const opaque = new Uint8Array(w * h * 4);
    for (let i = 0; i < w * h; i++) opaque.set([0, 160, 0, 255], i * 4);
    const lastClear = opaque.slice();
    lastClear.set([0, 0, 255, 0], (w * h - 1) * 4); // the hidden colour is blue
    for (const [px, corner] of [[opaque, 'green'], [lastClear, 'white']] as const) {
      const png = await Transformer.fromRgbaPixels(px, w, h).png();
      const res = await ctx.json('images/convertImage', { dataUrl: dataUrl(png) }, ctx.users[0]);
      const { pixels, meta } = await decode(res.body.dataUrl);
      const ch = pixels.length / (meta.width * meta.height);
      const at = (x: number, y: number) => [...pixels.subarray((y * w + x) * ch, (y * w + x) * ch + 3)];
      expect(at(0, 0)[1]).toBeGreaterThan(130); // green stays green
      const [r, g, b] = at(w - 1, h - 1);
      if (corner === 'white') expect(Math.min(r!, g!, b!)).toBeGreaterThan(200);
      else expect(r! + b!).toBeLessThan(80);
    }
  });

  test("an RGBA image's encode starts before its alpha check only while the last one was opaque", async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const w = 40;
    const h = 30;
    const opaque = new Uint8Array(w * h * 4);
    for (let i = 0; i < w * h; i++) opaque.set([0, 160, 0, 255], i * 4);
    const clear = opaque.slice();
    clear.set([0, 0, 255, 0], 0); // one transparent pixel, hiding blue
    const png = { opaque: await Transformer.fromRgbaPixels(opaque, w, h).png(), clear: await Transformer.fromRgbaPixels(clear, w, h).png() };
    const encodes = spyOn(Transformer.prototype, 'jpeg');
    try {
      const calls: number[] = [];
      for (const kind of ['clear', 'clear', 'opaque', 'opaque', 'clear', 'opaque'] as const) {
        const before = encodes.mock.calls.length;
        const res = await ctx.json('images/convertImage', { dataUrl: dataUrl(png[kind]) }, ctx.users[0]);
        calls.push(encodes.mock.calls.length - before);
        const { pixels, meta } = await decode(res.body.dataUrl);
        const ch = pixels.length / (meta.width * meta.height);
        const [r, g, b] = pixels.subarray(0, ch);
        if (kind === 'clear') expect(Math.min(r!, g!, b!)).toBeGreaterThan(200); // flattened onto white
        else expect(g! > 130 && r! + b! < 80).toBe(true); // the early encode, kept
      }
      // Two encodes where the guess was wrong (an early one thrown away, then the flattened one):
      // the first image (the guess starts at opaque) and the transparent one after two opaque.
      expect(calls).toEqual([2, 1, 1, 1, 2, 1]);
    } finally {
      encodes.mockRestore();
    }
  });

  test('many RGBA conversions at once, opaque and transparent mixed, early encodes beside checks: every answer right', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { imageConcurrency: 8 } });
    const w = 300; // two 65,536-word blocks of the alpha check
    const h = 300;
    const image = async (clear: boolean) => {
      const px = new Uint8Array(w * h * 4);
      for (let i = 0; i < w * h; i++) px.set([0, 160, 0, 255], i * 4);
      if (clear) px.set([0, 0, 255, 0], (w * h - 1) * 4);
      return dataUrl(await Transformer.fromRgbaPixels(px, w, h).png());
    };
    const urls = { opaque: await image(false), clear: await image(true) };
    const kinds = Array.from({ length: 24 }, (_, i): 'clear' | 'opaque' => (i % 3 === 0 ? 'clear' : 'opaque'));
    const answers = await Promise.all(kinds.map((kind) => ctx.json('images/convertImage', { dataUrl: urls[kind] }, ctx.users[0])));
    for (const [i, res] of answers.entries()) {
      const { pixels, meta } = await decode(res.body.dataUrl);
      const ch = pixels.length / (meta.width * meta.height);
      const [r, g, b] = pixels.subarray((w * h - 1) * ch, (w * h - 1) * ch + 3);
      if (kinds[i] === 'clear') expect(Math.min(r!, g!, b!)).toBeGreaterThan(200);
      else expect(g! > 130 && r! + b! < 80).toBe(true);
    }
  });

  test('conversions queue behind PARLEY_IMAGE_CONCURRENCY: never more at once, all answered', async () => {
    // The real turnstile, watched: how many requests hold a turn at any moment.
    const real = createTurnstile(2);
    let holding = 0;
    let most = 0;
    const watched: Turnstile = {
      get running() {
        return real.running;
      },
      get waiting() {
        return real.waiting;
      },
      acquire: async (signal) => {
        const release = await real.acquire(signal);
        most = Math.max(most, ++holding);
        let released = false;
        return () => {
          if (!released) holding--;
          released = true;
          release();
        };
      },
    };
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], deps: { imageConversions: watched } });
    const png = await noise(400, 300).png();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        ctx.json('images/convertImage', { dataUrl: dataUrl(png) }, ctx.users[0]),
      ),
    );
    for (const res of answers) expect([res.status, res.body.success, res.body.originalFormat]).toEqual([200, true, 'png']);
    expect(most).toBe(2);
    expect([real.running, real.waiting]).toEqual([0, 0]);
  });

  test('a request whose client leaves while it waits for a turn is dropped and never converts', async () => {
    const turns = createTurnstile(1);
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], deps: { imageConversions: turns } });
    const holdTurn = await turns.acquire();
    const leaving = new AbortController();
    const answered = ctx.app.handle(
      new Request('http://localhost/api/images/convertImage', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ctx.users[0]!.key },
        body: JSON.stringify({ dataUrl: dataUrl(await noise(8, 8).png()) }),
        signal: leaving.signal,
      }),
    );
    for (let i = 0; i < 100 && turns.waiting === 0; i++) await Bun.sleep(1);
    expect(turns.waiting).toBe(1);
    leaving.abort();
    const res = await answered;
    expect(res.status).toBe(499);
    expect(((await res.json()) as { message: string }).message).toBe('The request was cancelled before its turn.');
    holdTurn();
    // Had it kept its place, it would hold the turn now.
    expect([turns.running, turns.waiting]).toEqual([0, 0]);
  });

  test('an upload still arriving holds no turn: a slow client does not stall the others', async () => {
    const turns = createTurnstile(1);
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], deps: { imageConversions: turns } });
    const body = JSON.stringify({ dataUrl: dataUrl(await noise(8, 8).png()) });
    // A body that arrives in two parts, the second only when the test says so.
    let finish!: () => void;
    const rest = new Promise<void>((resolve) => (finish = resolve));
    const trickle = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, 10)));
        await rest;
        controller.enqueue(new TextEncoder().encode(body.slice(10)));
        controller.close();
      },
    });
    const headers = { 'content-type': 'application/json', 'x-api-key': ctx.users[0]!.key };
    const slow = ctx.app.handle(
      new Request('http://localhost/api/images/convertImage', { method: 'POST', headers, body: trickle, duplex: 'half' } as RequestInit),
    );
    await Bun.sleep(10);
    const quick = ctx.app.handle(new Request('http://localhost/api/images/convertImage', { method: 'POST', headers, body }));
    const first = await Promise.race([quick.then(() => 'quick'), Bun.sleep(5_000).then(() => 'still waiting')]);
    expect(first).toBe('quick');
    finish();
    for (const res of [await quick, await slow]) expect([res.status, ((await res.json()) as { success: boolean }).success]).toEqual([200, true]);
    expect([turns.running, turns.waiting]).toEqual([0, 0]);
  });

  test('base64 payloads: line-wrapped, base64url and mixed alphabets decode; anything else is INVALID_DATA_URL', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const png = await noise(40, 40).png(); // noise: every base64 character shows up
    const b64 = Buffer.from(png).toString('base64');
    const wrapped = b64.replace(/.{76}/g, '$&\r\n');
    const url = Buffer.from(png).toString('base64url');
    expect(url).toMatch(/[-_]/);
    const mixed = b64.replace('+', '-').replace('/', '_'); // the same bytes, both alphabets at once
    expect(mixed).toMatch(/[-_]/);
    expect(mixed).toMatch(/[+/]/);
    for (const payload of [wrapped, url, mixed]) {
      const res = await ctx.json('images/convertImage', { dataUrl: `data:image/png;base64,${payload}` }, ctx.users[0]);
      expect(res.body).toMatchObject({ success: true, originalFormat: 'png' });
    }
    for (const payload of [`${b64.slice(0, 40)}!${b64.slice(41)}`, `${b64.slice(0, 40)}*${b64.slice(41)}`]) {
      const res = await ctx.json('images/convertImage', { dataUrl: `data:image/png;base64,${payload}` }, ctx.users[0]);
      expect(res.body).toMatchObject({ success: false, error: { code: 'INVALID_DATA_URL' } });
    }
  });

  test('percent-encoded payloads: each %XX is a byte, so binary images decode; a bad escape is INVALID_DATA_URL', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const png = await noise(8, 8).png(); // starts with %89, which is no UTF-8
    // Unreserved characters as they are, everything else escaped, in either case of hex digit.
    const encode = (bytes: Uint8Array, hex: (h: string) => string) =>
      Array.from(bytes, (b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${hex(b.toString(16).padStart(2, '0'))}`)).join('');
    for (const payload of [encode(png, (h) => h.toUpperCase()), encode(png, (h) => h)]) {
      const res = await ctx.json('images/convertImage', { dataUrl: `data:image/png,${payload}` }, ctx.users[0]);
      expect(res.body).toMatchObject({ success: true, originalFormat: 'png' });
    }
    // Text formats too; the second is a whole PNM image in 9 bytes.
    for (const pnm of ['P2 2 1 255 0 255\n', 'P1\n1 1\n1\n']) {
      const res = await ctx.json('images/convertImage', { dataUrl: `data:image/x-portable-anymap,${encodeURIComponent(pnm)}` }, ctx.users[0]);
      expect(res.body).toMatchObject({ success: true, originalFormat: 'pnm' });
    }
    for (const payload of ['%8', '%zz41', 'abc%']) {
      const bad = await ctx.json('images/convertImage', { dataUrl: `data:image/png,${payload}` }, ctx.users[0]);
      expect(bad.body).toMatchObject({ success: false, error: { code: 'INVALID_DATA_URL' } });
    }
  });

  test('GIF: the first frame', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const res = await ctx.json('images/convertImage', { dataUrl: dataUrl(fixtures.gif!, 'image/gif') }, ctx.users[0]);
    expect(res.body.originalFormat).toBe('gif');
    const { pixels } = await decode(res.body.dataUrl);
    expect(pixels[0]).toBeGreaterThan(200); // red, not the black second frame
  });

  test('EXIF orientation is applied', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const rotated = withExifOrientation(await noise(8, 2).jpeg(90), 6);
    expect((await new Transformer(rotated).metadata(true)).orientation).toBe(6);
    const res = await ctx.json('images/convertImage', { dataUrl: dataUrl(rotated, 'image/jpeg') }, ctx.users[0]);
    const { meta } = await decode(res.body.dataUrl);
    expect([meta.width, meta.height]).toEqual([2, 8]);
  });

  test('quality is configurable', async () => {
    const img = dataUrl(await noise(64, 64).png());
    const size = async (q: number) => {
      const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { imageJpegQuality: q } });
      return (await ctx.json('images/convertImage', { dataUrl: img }, ctx.users[0])).body.dataUrl.length;
    };
    expect(await size(20)).toBeLessThan((await size(95)) * 0.7);
  });

  test('failures are 200 with {success:false, error:{code, message}}', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { imageMaxBytes: 4096 } });
    const convert = async (url: string) => {
      const res = await ctx.json('images/convertImage', { dataUrl: url }, ctx.users[0]);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(false);
      expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message']);
      expect(typeof res.body.error.message).toBe('string');
      return res.body.error.code;
    };
    expect(await convert('hello')).toBe('INVALID_DATA_URL');
    expect(await convert('https://example.org/cat.png')).toBe('INVALID_DATA_URL');
    expect(await convert('data:image/png;base64,@@not base64@@')).toBe('INVALID_DATA_URL');
    expect(await convert('data:image/png;base64,')).toBe('INVALID_DATA_URL');
    expect(await convert(dataUrl(new TextEncoder().encode('just some text, not an image'), 'image/png'))).toBe('UNSUPPORTED_FORMAT');
    expect(await convert('data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E')).toBe('UNSUPPORTED_FORMAT');
    const broken = new Uint8Array([...pngHeaderOnly(10, 10), ...new Uint8Array(64).fill(7)]);
    expect(await convert(dataUrl(broken))).toBe('DECODE_FAILED');
    expect(await convert(dataUrl(fixtures.png!.subarray(0, 20)))).toBe('DECODE_FAILED'); // header cut short
    expect(await convert(dataUrl(new Uint8Array(5000).fill(1)))).toBe('TOO_LARGE');
    expect((await ctx.json('images/convertImage', { dataUrl: 'x' })).body).toEqual(SPEC_ERRORS[401]);
    expect((await ctx.json('images/convertImage', {}, ctx.users[0])).status).toBe(400);
  });

  test('a decompression bomb is refused from its header, before any decoding', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const started = performance.now();
    const png = await ctx.json('images/convertImage', { dataUrl: dataUrl(pngHeaderOnly(100_000, 100_000)) }, ctx.users[0]);
    expect(png.body).toEqual({ success: false, error: { code: 'TOO_LARGE', message: expect.stringContaining('100000 × 100000') } });
    expect(performance.now() - started).toBeLessThan(500);
    // A header-only file would fail to decode: TOO_LARGE proves the size check ran first.
    const gif = await ctx.json('images/convertImage', { dataUrl: dataUrl(twoFrameGif(65535, 65535)) }, ctx.users[0]);
    expect(gif.body.error.code).toBe('TOO_LARGE');
    // The pixel limit is configurable.
    const tight = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { imageMaxPixels: 20 } });
    expect((await tight.json('images/convertImage', { dataUrl: dataUrl(fixtures.png!) }, tight.users[0])).body.error.code).toBe('TOO_LARGE');
  });

  test('compressed PNG chunks (iCCP, zTXt, iTXt) are dropped before decoding: bombs in them convert, and no output changes', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const convert = async (bytes: Uint8Array) => (await ctx.json('images/convertImage', { dataUrl: dataUrl(bytes) }, ctx.users[0])).body;
    // A real image with a small profile and text converts to exactly what it converts to without
    // them: the codec neither applies the profile nor carries it (or text) into the JPEG. This
    // pins why dropping them is safe; a codec that starts applying profiles fails it.
    const pixels = zeroPng({ width: 8, height: 8, colorType: 2 });
    const profile = pngChunk('iCCP', new Uint8Array([...Buffer.from('sRGB-ish\0'), 0, ...deflateSync(new Uint8Array(3000).fill(9))]));
    const text = pngChunk('zTXt', new Uint8Array([...Buffer.from('Comment\0'), 0, ...deflateSync(Buffer.from('hello'))]));
    const withChunks = zeroPng({ width: 8, height: 8, colorType: 2, before: [profile, text] });
    expect(stripPngChunks(withChunks)).toEqual(pixels);
    expect(stripPngChunks(pixels)).toBe(pixels); // nothing to drop: the same bytes, no copy
    expect((await convert(withChunks)).dataUrl).toBe((await convert(pixels)).dataUrl);
    // Bombs: 100 MB of zeros in each chunk, in a PNG and in a PNG inside an ICO.
    for (const bomb of [iccpBomb(1e8), ztxtBomb(1e8), itxtBomb(1e8)]) expect(await convert(bomb)).toMatchObject({ success: true, originalFormat: 'png' });
    const ico = icoOf(iccpBomb(1e8));
    expect(stripIcoChunks(ico).length).toBe(icoOf(zeroPng()).length);
    expect(await convert(ico)).toMatchObject({ success: true, originalFormat: 'ico' });
    // A chunk running past the end stops the walk; the decoder refuses the file as before.
    const cut = withChunks.subarray(0, 40);
    expect(stripPngChunks(cut)).toBe(cut);
  });

  test('16-bit channels count twice against the pixel limit, in every header that declares them', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { imageMaxPixels: 100 } });
    const convert = async (bytes: Uint8Array) => (await ctx.json('images/convertImage', { dataUrl: dataUrl(bytes) }, ctx.users[0])).body;
    expect(readImageHeader(zeroPng({ width: 8, height: 8, bitDepth: 16 }))?.channelBytes).toBe(2);
    expect(readImageHeader(new TextEncoder().encode('P6 8 8 65535\n'))?.channelBytes).toBe(2);
    expect(readImageHeader(new TextEncoder().encode('P6 8 8 255\n'))?.channelBytes).toBe(1);
    expect(readImageHeader(new TextEncoder().encode('P7\nWIDTH 8\nHEIGHT 8\nDEPTH 4\nMAXVAL 65535\nENDHDR\n'))?.channelBytes).toBe(2);
    // 8 × 8 = 64 pixels: within 100 at 8 bits, 128 at 16 bits.
    expect(await convert(zeroPng({ width: 8, height: 8 }))).toMatchObject({ success: true });
    expect(await convert(zeroPng({ width: 8, height: 8, bitDepth: 16 }))).toEqual({
      success: false,
      error: { code: 'TOO_LARGE', message: 'the image is 8 × 8 pixels of 16-bit channels, which count 2 times, more than 100' },
    });
    expect(await convert(zeroPng({ width: 7, height: 7, bitDepth: 16 }))).toMatchObject({ success: true });
  });

  test('conversion runs off the event loop: a cheap request finishes first', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const big = dataUrl(await noise(1000, 1000).png());
    const order: string[] = [];
    const conversion = ctx.json('images/convertImage', { dataUrl: big }, ctx.users[0]).then((r) => (order.push('convert'), r));
    await Bun.sleep(1);
    const cheap = ctx.json('preferences/get', {}, ctx.users[0]).then(() => order.push('cheap'));
    const [res] = await Promise.all([conversion, cheap]);
    expect(res.body.success).toBe(true);
    expect(order).toEqual(['cheap', 'convert']);
  }, 30_000);
});

describe('GIF decoding (no native GIF decoder: Parley decodes the first frame itself)', () => {
  const palette = Array.from({ length: 256 }, (_, i) => [(i * 7) % 256, (i * 13) % 256, (i * 29) % 256]);
  const randomIndices = (n: number, colours: number) => Uint8Array.from({ length: n }, () => Math.floor(Math.random() * colours));

  test('exact pixels, through dictionary resets, interlacing and local colour tables', async () => {
    for (const [w, h, colours, interlace] of [[100, 80, 256, false], [37, 23, 2, true], [300, 200, 16, true]] as const) {
      const indices = randomIndices(w * h, colours);
      const img = await decodeGifFirstFrame(buildGif({ width: w, height: h, palette: palette.slice(0, colours), indices, interlace, local: interlace }));
      expect([img.width, img.height]).toEqual([w, h]);
      let wrong = 0;
      for (let i = 0; i < indices.length; i++) {
        const c = palette[indices[i]!]!;
        if (img.rgb[i * 3] !== c[0] || img.rgb[i * 3 + 1] !== c[1] || img.rgb[i * 3 + 2] !== c[2]) wrong++;
      }
      expect({ w, h, wrong }).toEqual({ w, h, wrong: 0 });
    }
  });

  test('transparent pixels and the screen outside the frame come out white', async () => {
    // A 4×2 frame at (2, 1) on a 8×4 screen; index 1 is transparent.
    const gif = buildGif({ width: 4, height: 2, screenW: 8, screenH: 4, left: 2, top: 1, palette: [[0, 0, 200], [0, 255, 0]], indices: Uint8Array.from([0, 1, 0, 1, 1, 0, 1, 0]), transparent: 1 });
    const img = await decodeGifFirstFrame(gif);
    const px = (x: number, y: number) => [...img.rgb.subarray((y * 8 + x) * 3, (y * 8 + x) * 3 + 3)];
    expect(px(2, 1)).toEqual([0, 0, 200]);
    expect(px(3, 1)).toEqual([255, 255, 255]); // transparent
    expect(px(0, 0)).toEqual([255, 255, 255]); // outside the frame
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const res = await ctx.json('images/convertImage', { dataUrl: dataUrl(gif, 'image/gif') }, ctx.users[0]);
    expect(res.body.success).toBe(true);
    expect((await decode(res.body.dataUrl)).meta).toMatchObject({ width: 8, height: 4 });
  });

  test('shrunk to fit a side (uploads\' thumbnails): each pixel the average of those it covers, white where the frame is transparent or absent', async () => {
    // 8 × 4 screen; a 4 × 2 frame at (0, 0): index 0 black, index 1 transparent.
    const gif = buildGif({ width: 4, height: 2, screenW: 8, screenH: 4, palette: [[0, 0, 0], [9, 9, 9]], indices: Uint8Array.from([0, 0, 0, 1, 0, 0, 1, 1]), transparent: 1 });
    const img = decodeGifFirstFrame(gif, 4);
    expect([img.width, img.height]).toEqual([4, 2]);
    expect(new TextDecoder().decode(img.ppm.subarray(0, 11))).toBe('P6\n4 2\n255\n');
    const px = (x: number, y: number) => [...img.rgb.subarray((y * 4 + x) * 3, (y * 4 + x) * 3 + 3)];
    expect(px(0, 0)).toEqual([0, 0, 0]); // four black
    expect(px(1, 0)).toEqual([191, 191, 191]); // one black, three transparent: 3 × 255 / 4
    expect(px(2, 0)).toEqual([255, 255, 255]); // outside the frame
    expect(px(0, 1)).toEqual([255, 255, 255]);
    // No larger than the frame: as decoded in full.
    expect(decodeGifFirstFrame(gif, 8).rgb).toEqual(decodeGifFirstFrame(gif).rgb);
    // Sides in proportion, at least one pixel.
    expect([decodeGifFirstFrame(gif, 2).width, decodeGifFirstFrame(gif, 2).height]).toEqual([2, 1]);
    expect([decodeGifFirstFrame(buildGif({ width: 300, height: 1, palette: [[1, 2, 3]], indices: new Uint8Array(300) }), 10).height]).toEqual([1]);
  });

  test('a corrupt GIF is DECODE_FAILED', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const gif = buildGif({ width: 10, height: 10, palette: palette.slice(0, 4), indices: randomIndices(100, 4) });
    const cut = gif.subarray(0, 24); // the colour table cut short
    expect((await ctx.json('images/convertImage', { dataUrl: dataUrl(cut) }, ctx.users[0])).body.error.code).toBe('DECODE_FAILED');
    const noImage = new Uint8Array([...gif.subarray(0, 13 + 12), 0x3b]);
    expect((await ctx.json('images/convertImage', { dataUrl: dataUrl(noImage) }, ctx.users[0])).body.error.code).toBe('DECODE_FAILED');
  });
});

describe('hostile bytes (property tests)', () => {
  const MAGICS = [
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52],
    [0xff, 0xd8, 0xff],
    [...Buffer.from('RIFF\0\0\0\0WEBPVP8X')],
    [...Buffer.from('GIF89a')],
    [...Buffer.from('BM')],
    [...Buffer.from('II*\0')],
    [0, 0, 0, 0x1c, ...Buffer.from('ftypavif')],
    [0, 0, 1, 0],
    [...Buffer.from('P6 ')],
    [...Buffer.from('qoif')],
  ];
  const hostile = fc.tuple(fc.constantFrom(...MAGICS), fc.uint8Array({ maxLength: 300 })).map(([m, rest]) => new Uint8Array([...m, ...rest]));

  test('the header reader never throws on a known magic followed by garbage', () => {
    fc.assert(
      fc.property(hostile, (bytes) => {
        const h = readImageHeader(bytes);
        if (h?.width !== undefined) expect(Number.isInteger(h.width) && h.width > 0).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test('the GIF decoder either decodes or throws its own error on garbage', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), async (rest, w, h) => {
        const gif = buildGif({ width: w, height: h, palette: [[1, 2, 3], [4, 5, 6]], indices: new Uint8Array(w * h) });
        const corrupt = new Uint8Array([...gif.subarray(0, 13 + 6 + 11), ...rest]);
        try {
          const img = await decodeGifFirstFrame(corrupt);
          expect(img.rgb.length).toBe(img.width * img.height * 3);
        } catch (err) {
          expect(err).toBeInstanceOf(GifDecodeError);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('convertImage answers success or a documented code for any bytes, never an HTTP error', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    await fc.assert(
      fc.asyncProperty(hostile, async (bytes) => {
        const res = await ctx.json('images/convertImage', { dataUrl: dataUrl(bytes) }, ctx.users[0]);
        expect(res.status).toBe(200);
        if (!res.body.success) expect(['UNSUPPORTED_FORMAT', 'DECODE_FAILED', 'TOO_LARGE']).toContain(res.body.error.code);
      }),
      { numRuns: 80 },
    );
  });
});
