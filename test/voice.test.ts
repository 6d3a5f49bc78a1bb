import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { captureLog, createTestContext, cookie, SPEC_ERRORS, until, type TestContext, type TestUser } from './helpers';
import { createTurnstile } from '../src/http/turnstile';
import { transcriptionTurn } from '../src/voice/transcription-turn';
import type { AppError } from '../src/http/errors';
import { fakeAudioChunks, startFakeAudio } from './fakes/openai-audio';
import { addWriter, appendItem, createConversation } from '../src/chat/conversation.store';
import { testConfig, type Config } from '../src/config';
import { probeVoice } from '../src/voice/voice-check';

// Generous: the suite shares small machines with other work.
setDefaultTimeout(30_000);

/**
 * Voice through HTTP, against a local server speaking OpenAI's audio wire formats
 * (test/fakes/openai-audio.ts): uploads refused or passed on by what their bytes are, the limits,
 * the upstream's failures as Parley's own errors, speech streamed as it is produced, and a client
 * that leaves taking the upstream request with it.
 */

const fake = startFakeAudio();
afterAll(() => fake.stop());

const MAX_BYTES = 64 * 1024;
const MAX_CHARS = 200;
const voiceConfig: Partial<Config> = {
  sttBaseUrl: fake.url,
  sttApiKey: 'sk-stt-secret',
  sttMaxBytes: MAX_BYTES,
  ttsBaseUrl: fake.url,
  ttsApiKey: 'sk-tts-secret',
  ttsMaxChars: MAX_CHARS,
  // Many requests here; the limit has its own test below.
  rateLimitAi: undefined,
};
const users = [{ email: 'ann@example.org' }, { email: 'bob@example.org' }];
const ctx = await createTestContext({ users, config: voiceConfig });
const [ann, bob] = ctx.users as [TestUser, TestUser];

// --- synthetic recordings: each format's magic number, then filler ---

const bytes = (...parts: (string | number[])[]) => new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : p)));
const filled = (head: Uint8Array, size = 3000) => {
  const out = new Uint8Array(size).map((_, i) => (i * 7) & 0xff);
  out.set(head);
  return out;
};
const RECORDINGS: Record<string, { data: Uint8Array; sentAs: string }> = {
  wav: { data: filled(bytes('RIFF', [0x24, 0x08, 0, 0], 'WAVEfmt ', [16, 0, 0, 0, 1, 0, 1, 0])), sentAs: 'audio.wav' },
  'mp3 (ID3 tag)': { data: filled(bytes('ID3', [4, 0, 0, 0, 0, 0, 0])), sentAs: 'audio.mp3' },
  'mp3 (frame sync)': { data: filled(bytes([0xff, 0xfb, 0x90, 0x64, 0, 0])), sentAs: 'audio.mp3' },
  'm4a (phone)': { data: filled(bytes([0, 0, 0, 0x20], 'ftypM4A ', [0, 0, 0, 0], 'M4A isom')), sentAs: 'audio.m4a' },
  mp4: { data: filled(bytes([0, 0, 0, 0x18], 'ftypisom', [0, 0, 2, 0])), sentAs: 'audio.mp4' },
  'webm (browser)': { data: filled(bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01], 'webm')), sentAs: 'audio.webm' },
  ogg: { data: filled(bytes('OggS', [0, 2, 0, 0, 0, 0, 0, 0])), sentAs: 'audio.ogg' },
  flac: { data: filled(bytes('fLaC', [0, 0, 0, 0x22])), sentAs: 'audio.flac' },
};
const webm = RECORDINGS['webm (browser)']!.data;

// --- requests ---

const url = (path: string) => `http://localhost/api/${path}`;
const auth = (as: TestUser | Record<string, string>) => ('key' in as && 'user' in as ? { 'x-api-key': (as as TestUser).key } : (as as Record<string, string>));

function form(file?: { data: Uint8Array; name?: string; type?: string }, fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  if (file) f.append('file', new Blob([file.data], { type: file.type ?? 'application/octet-stream' }), file.name ?? 'recording.bin');
  return f;
}

async function transcribe(c: TestContext, body: RequestInit['body'], as: TestUser | Record<string, string> = ann, headers: Record<string, string> = {}) {
  const res = await c.app.handle(new Request(url('audio/transcribe'), { method: 'POST', body, headers: { ...auth(as), ...headers } }));
  return { status: res.status, body: (await res.json()) as any, res };
}

const speak = (c: TestContext, input: unknown, as: TestUser | Record<string, string> = ann, signal?: AbortSignal) =>
  c.app.handle(new Request(url('audio/speak'), { method: 'POST', body: JSON.stringify(input), headers: { 'content-type': 'application/json', ...auth(as) }, signal }));

/**
 * A multipart body as a stream that counts what was read of it: a file part of `fileBytes`
 * bytes, produced only as the server asks for it (no read-ahead).
 */
function countedUpload(fileBytes: number, chunk = 16 * 1024) {
  const boundary = 'parleytestboundary';
  const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.webm"\r\nContent-Type: audio/webm\r\n\r\n`);
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
  const counter = { read: 0, total: head.length + fileBytes + tail.length };
  let left = fileBytes;
  let started = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        let piece: Uint8Array;
        if (!started) {
          started = true;
          piece = new Uint8Array(head.length + webm.length);
          piece.set(head);
          piece.set(webm, head.length);
          left -= webm.length;
        } else if (left > 0) {
          piece = new Uint8Array(Math.min(chunk, left));
          left -= piece.length;
        } else if (left === 0) {
          piece = tail;
          left = -1;
        } else {
          controller.close();
          return;
        }
        counter.read += piece.length;
        controller.enqueue(piece);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, counter, contentType: `multipart/form-data; boundary=${boundary}` };
}

function uploadRequest(u: ReturnType<typeof countedUpload>, headers: Record<string, string> = {}) {
  return new Request(url('audio/transcribe'), {
    method: 'POST',
    body: u.stream,
    headers: { 'x-api-key': ann.key, 'content-type': u.contentType, ...headers },
    duplex: 'half',
  } as RequestInit);
}

async function assistantItem(owner: TestUser, content: string, role: 'assistant' | 'user' = 'assistant') {
  const conv = await ctx.store.read((tx) => createConversation(tx, { ownerId: owner.user.id }));
  const item = await ctx.store.read((tx) => appendItem(tx, { conversationId: conv.id, role, content }));
  return { conv, item };
}

const concat = (chunks: Uint8Array[]) => new Uint8Array(Buffer.concat(chunks));

describe('audio/transcribe', () => {
  for (const [name, rec] of Object.entries(RECORDINGS))
    test(`${name}: told by its bytes (declared as application/octet-stream, "recording.bin"), sent on named for what it is`, async () => {
      const before = fake.transcriptions.length;
      const res = await transcribe(ctx, form({ data: rec.data }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ text: `Heard ${rec.data.length} bytes of ${rec.sentAs}.`, language: 'english', durationSeconds: 1.5 });
      const seen = fake.transcriptions[before]!;
      expect({ ...seen, head: [...seen.head] }).toMatchObject({
        model: 'whisper-1',
        filename: rec.sentAs,
        size: rec.data.length,
        head: [...rec.data.subarray(0, 16)],
        responseFormat: 'verbose_json',
        authorization: 'Bearer sk-stt-secret',
      });
    });

  test('language and prompt go to the server; a language that is no language code is a 400 naming it', async () => {
    const before = fake.transcriptions.length;
    const ok = await transcribe(ctx, form({ data: webm }, { language: 'fr', prompt: 'Parley, Kokoro' }));
    expect(ok.status).toBe(200);
    expect(fake.transcriptions[before]).toMatchObject({ language: 'fr', prompt: 'Parley, Kokoro' });
    const bad = await transcribe(ctx, form({ data: webm }, { language: 'french please' }));
    expect(bad.status).toBe(400);
    expect(bad.body.data.issues.map((i: any) => i.path)).toEqual([['language']]);
    expect(fake.transcriptions.length).toBe(before + 1);
  });

  test('what is no accepted recording is a 400 saying what is accepted, and nothing goes upstream', async () => {
    const before = fake.transcriptions.length;
    const cases: [string, Uint8Array, RegExp][] = [
      ['png declared audio/webm', filled(bytes([0x89], 'PNG\r\n', [0x1a, 0x0a])), /not a recording Parley accepts\. Accepted: m4a/],
      ['raw AAC (ADTS)', filled(bytes([0xff, 0xf1, 0x50, 0x80])), /Raw AAC \(ADTS\)/],
      ['3GP (Android AMR)', filled(bytes([0, 0, 0, 0x18], 'ftyp3gp4')), /3GP recordings are not accepted/],
      ['plain text', new TextEncoder().encode('hello, this is not audio at all'), /not a recording Parley accepts/],
      ['empty', new Uint8Array(0), /The audio file is empty/],
      ['five bytes', bytes('RIFF', [0]), /not a recording Parley accepts/],
    ];
    for (const [label, data, message] of cases) {
      const res = await transcribe(ctx, form({ data, name: 'voice.webm', type: 'audio/webm' }));
      expect({ label, status: res.status, code: res.body.code }).toEqual({ label, status: 400, code: 'BAD_REQUEST' });
      expect(res.body.message).toMatch(message);
    }
    expect(fake.transcriptions.length).toBe(before);
  });

  test('a refused type stops the reading at its first bytes, not at the end of the upload', async () => {
    const boundary = 'b0undary';
    let read = 0;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const piece = read === 0 ? new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\nGIF89a not audio`) : new Uint8Array(16 * 1024);
          read += piece.length;
          controller.enqueue(piece);
        },
      },
      { highWaterMark: 0 },
    );
    const res = await ctx.app.handle(
      new Request(url('audio/transcribe'), { method: 'POST', body: stream, headers: { 'x-api-key': ann.key, 'content-type': `multipart/form-data; boundary=${boundary}` }, duplex: 'half' } as RequestInit),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).message).toMatch(/not a recording/);
    // An endless body: the answer came after a couple of pieces.
    expect(read).toBeLessThan(64 * 1024);
  });

  test('the form itself: JSON is 415, no file part, two files, a second file part and malformed bodies are 400', async () => {
    const json = await ctx.json('audio/transcribe', { language: 'en' }, ann);
    expect(json.status).toBe(415);
    expect(json.body.message).toMatch(/multipart\/form-data, with the file in a part named "file"/);
    const none = await transcribe(ctx, form(undefined, { language: 'en' }));
    expect([none.status, none.body.message]).toEqual([400, 'The upload has no part named "file".']);
    const two = form({ data: webm });
    two.append('file', new Blob([webm]), 'again.webm');
    expect((await transcribe(ctx, two)).body.message).toMatch(/Send one recording, in a part named "file"|one part named "file"/);
    const other = form({ data: webm });
    other.append('attachment', new Blob([webm]), 'other.webm');
    expect((await transcribe(ctx, other)).status).toBe(400);
    const broken = await transcribe(ctx, '--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nRIFF', ann, { 'content-type': 'multipart/form-data; boundary=x' });
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/not valid multipart\/form-data/);
    const noBoundary = await transcribe(ctx, 'x', ann, { 'content-type': 'multipart/form-data' });
    expect(noBoundary.status).toBe(415);
  });

  test('too big: 413 from the declared length with nothing read; a file over PARLEY_STT_MAX_BYTES stops being read there', async () => {
    // Declared: refused before the body is touched.
    const declared = countedUpload(10 * MAX_BYTES);
    const res = await ctx.app.handle(uploadRequest(declared, { 'content-length': String(declared.counter.total) }));
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).message).toBe(`The upload is larger than ${MAX_BYTES + 64 * 1024} bytes`);
    expect(declared.counter.read).toBe(0);
    // Not declared (chunked): read up to the limit, then refused; the rest is never asked for.
    const chunked = countedUpload(100 * MAX_BYTES);
    const cut = await ctx.app.handle(uploadRequest(chunked));
    expect(cut.status).toBe(413);
    expect(((await cut.json()) as any).message).toBe(`The audio is larger than ${MAX_BYTES} bytes (PARLEY_STT_MAX_BYTES).`);
    expect(chunked.counter.read).toBeLessThan(3 * MAX_BYTES);
    expect(chunked.counter.total).toBeGreaterThan(90 * MAX_BYTES);
    // At the limit it passes; one byte more does not.
    const at = await transcribe(ctx, form({ data: filled(webm, MAX_BYTES) }));
    expect(at.status).toBe(200);
    const over = await transcribe(ctx, form({ data: filled(webm, MAX_BYTES + 1) }));
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ defined: false, code: 'PAYLOAD_TOO_LARGE', status: 413 });
  });

  test('no speech-to-text server: 503 naming the settings, the upload left unread, and no error in the log (a state of the configuration)', async () => {
    const { log, lines } = captureLog();
    const off = await createTestContext({ users, log });
    const u = countedUpload(4 * 1024);
    const res = await off.app.handle(uploadRequest(u, { 'x-api-key': off.users[0]!.key }));
    const body = (await res.json()) as any;
    expect(res.status).toBe(503);
    expect(body).toEqual({
      defined: false,
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      message: 'Speech to text is not set up on this server: its admin sets PARLEY_STT_BASE_URL (and PARLEY_STT_API_KEY, PARLEY_STT_MODEL as needed; see docs/voice.md), or adds a stt connection (docs/connections.md).',
      data: {},
    });
    expect(u.counter.read).toBe(0);
    // Speech is off there too, with its own settings named.
    const speech = await speak(off, { text: 'hello' }, off.users[0]!);
    expect(speech.status).toBe(503);
    expect(((await speech.json()) as any).message).toMatch(/^Text to speech is not set up on this server: its admin sets PARLEY_TTS_BASE_URL/);
    // Each is its request line at info, nothing more: no error, no stack trace.
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.filter((l) => l.level !== 'info' && l.level !== 'debug')).toEqual([]);
    expect(lines.join('\n')).not.toMatch(/stack|    at /);
    expect(logged.filter((l) => l.status === 503).length).toBe(2);
  });

  test("upstream failures are Parley's own errors: the server's words, address and key never reach the caller", async () => {
    const secret = 'Traceback at /opt/whisper/server.py line 42: CUDA out of memory, key sk-stt-secret';
    const cases: [{ fail: number; headers?: Record<string, string> }, number, string, string | null][] = [
      [{ fail: 500 }, 502, 'The speech-to-text server failed with a server error (HTTP 500).', null],
      [{ fail: 401 }, 502, "The speech-to-text server refused Parley's API key (HTTP 401).", null],
      [{ fail: 404 }, 502, 'The speech-to-text server does not know this model or address (HTTP 404).', null],
      [{ fail: 400 }, 400, 'The speech-to-text server could not use this audio (HTTP 400).', null],
      [{ fail: 413 }, 413, 'The audio is larger than the speech-to-text server accepts (HTTP 413).', null],
      [{ fail: 429, headers: { 'retry-after': '7' } }, 503, 'The speech-to-text server is busy or over its limit; try again later (HTTP 429).', '7'],
    ];
    const original = fake.transcribe;
    try {
      for (const [failure, status, message, retryAfter] of cases) {
        fake.transcribe = () => ({ ...failure, message: secret });
        const res = await transcribe(ctx, form({ data: webm }));
        expect({ upstream: failure.fail, status: res.status, message: res.body.message }).toEqual({ upstream: failure.fail, status, message });
        expect(res.res.headers.get('retry-after')).toBe(retryAfter);
        expect(JSON.stringify(res.body)).not.toMatch(/Traceback|sk-stt|127\.0\.0\.1/);
      }
    } finally {
      fake.transcribe = original;
    }
    const gone = await createTestContext({ users, config: { ...voiceConfig, sttBaseUrl: 'http://127.0.0.1:9/v1' } });
    const unreachable = await transcribe(gone, form({ data: webm }), gone.users[0]!);
    expect([unreachable.status, unreachable.body.message]).toEqual([502, 'The speech-to-text server could not be reached.']);
  });

  test('a server that takes no verbose_json (gpt-4o-transcribe) is asked again with json, and remembered', async () => {
    const plain = await createTestContext({ users, config: { ...voiceConfig, sttModel: 'gpt-4o-transcribe' } });
    const before = fake.transcriptions.length;
    const first = await transcribe(plain, form({ data: webm }), plain.users[0]!);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ text: `Heard ${webm.length} bytes of audio.webm.` });
    expect(fake.transcriptions.slice(before).map((t) => t.responseFormat)).toEqual(['verbose_json', 'json']);
    await transcribe(plain, form({ data: webm }), plain.users[0]!);
    expect(fake.transcriptions.slice(before).map((t) => t.responseFormat)).toEqual(['verbose_json', 'json', 'json']);
  });

  test("a browser post with the session cookie must come from this server's pages: another site, none said, or Sec-Fetch-Site cross-site is 403; the same origin and API keys pass", async () => {
    const foreign = await transcribe(ctx, form({ data: webm }), cookie(ann), { origin: 'https://evil.example.org' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual(SPEC_ERRORS[403]);
    expect((await transcribe(ctx, form({ data: webm }), cookie(ann), { origin: 'null' })).status).toBe(403);
    expect((await transcribe(ctx, form({ data: webm }), cookie(ann))).status).toBe(403);
    expect((await transcribe(ctx, form({ data: webm }), cookie(ann), { origin: 'http://localhost', 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await transcribe(ctx, form({ data: webm }), cookie(ann), { origin: 'http://localhost' })).status).toBe(200);
    expect((await transcribe(ctx, form({ data: webm }), cookie(ann), { origin: 'http://localhost', 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await transcribe(ctx, form({ data: webm }), ann, { origin: 'https://evil.example.org' })).status).toBe(200);
  });

  test('transcriptions take turns (PARLEY_STT_CONCURRENCY): one runs, the next waits with its upload unread; one that waits too long is a 503 with Retry-After', async () => {
    fake.transcribeDelayMs = 400;
    try {
      const before = fake.transcriptions.length;
      const first = transcribe(ctx, form({ data: webm }));
      await until(() => fake.transcriptions.length > before, 'the first upload to reach the fake');
      const waiting = countedUpload(4 * 1024);
      const second = ctx.app.handle(uploadRequest(waiting, { 'x-api-key': ann.key }));
      await Bun.sleep(200);
      // The first is still at the speech server: the second has not been read at all.
      expect(fake.transcriptions.length).toBe(before + 1);
      expect(waiting.counter.read).toBe(0);
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
      expect(fake.transcriptions.length).toBe(before + 2);
    } finally {
      fake.transcribeDelayMs = 0;
    }
    const turns = createTurnstile(1);
    const held = await turns.acquire();
    const busy = await transcriptionTurn({ transcriptions: turns }, new AbortController().signal, 50).catch((err: AppError) => err);
    expect(busy).toMatchObject({ status: 503, headers: { 'retry-after': '10' }, message: expect.stringContaining('PARLEY_STT_CONCURRENCY') });
    held();
  });

  test('a client that leaves mid-transcription aborts the upstream request', async () => {
    fake.transcribeDelayMs = 5000;
    try {
      const before = fake.transcriptions.length;
      const leave = new AbortController();
      const pending = ctx.app.handle(new Request(url('audio/transcribe'), { method: 'POST', body: form({ data: webm }), headers: { 'x-api-key': ann.key }, signal: leave.signal }));
      await until(() => fake.transcriptions.length > before, 'the upload to reach the fake');
      leave.abort();
      const res = await pending;
      expect(res.status).toBe(499);
      await until(() => fake.transcriptions[before]!.aborted, 'the fake to see the abort');
    } finally {
      fake.transcribeDelayMs = 0;
    }
  });
});

describe('audio/speak', () => {
  test('text: the audio with its content type, the request as OpenAI takes it', async () => {
    const before = fake.speeches.length;
    const res = await speak(ctx, { text: 'Hello there.' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(concat(fakeAudioChunks()));
    expect(fake.speeches[before]).toMatchObject({
      body: { model: 'tts-1', voice: 'alloy', input: 'Hello there.', response_format: 'mp3' },
      authorization: 'Bearer sk-tts-secret',
      finished: true,
    });
  });

  test('voice and each format: passed on, answered with the format\'s content type', async () => {
    const types = { mp3: 'audio/mpeg', opus: 'audio/ogg; codecs=opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };
    for (const [format, type] of Object.entries(types)) {
      const before = fake.speeches.length;
      const res = await speak(ctx, { text: 'Hi.', voice: 'af_bella', format });
      expect({ format, status: res.status, type: res.headers.get('content-type') }).toEqual({ format, status: 200, type });
      await res.arrayBuffer();
      expect(fake.speeches[before]!.body).toMatchObject({ voice: 'af_bella', response_format: format });
    }
    expect((await speak(ctx, { text: 'Hi.', format: 'ogg' })).status).toBe(400);
  });

  test('streamed as it arrives: the first chunk is read while the fake still holds the rest', async () => {
    fake.hold = true;
    try {
      const before = fake.speeches.length;
      const res = await speak(ctx, { text: 'A long answer, read aloud.' });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      const record = fake.speeches[before]!;
      expect(first.value).toEqual(fakeAudioChunks()[0]!);
      expect({ sent: record.sent, finished: record.finished }).toEqual({ sent: 1, finished: false });
      fake.release();
      const rest: Uint8Array[] = [first.value!];
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(r.value);
      expect(concat(rest)).toEqual(concat(fakeAudioChunks()));
      expect(record.finished).toBe(true);
    } finally {
      fake.hold = false;
      fake.release();
    }
  });

  test('a client that leaves aborts the upstream request: its body cancelled, or its request aborted', async () => {
    fake.hold = true;
    try {
      for (const how of ['cancel', 'abort'] as const) {
        const before = fake.speeches.length;
        const leave = new AbortController();
        const res = await speak(ctx, { text: 'Never mind.' }, ann, leave.signal);
        const reader = res.body!.getReader();
        await reader.read();
        if (how === 'cancel') await reader.cancel();
        else leave.abort();
        await until(() => fake.speeches[before]!.aborted, `the fake to see the ${how}`);
        expect(fake.speeches[before]!.finished).toBe(false);
      }
    } finally {
      fake.hold = false;
      fake.release();
    }
  });

  test('itemId: an assistant answer the caller can read, without its Markdown and code', async () => {
    const { item } = await assistantItem(ann, '# Result\n\nThe **answer** is [here](https://example.org).\n\n```js\nconsole.log(1)\n```\n\n- one\n- two');
    const before = fake.speeches.length;
    const res = await speak(ctx, { itemId: item.id, voice: 'nova' }, ann);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(fake.speeches[before]!.body).toMatchObject({ input: 'Result\n\nThe answer is here.\n\none\ntwo', voice: 'nova' });
    // A writer of the conversation (a shared chat, a group member) may have it read too.
    const shared = await assistantItem(ann, 'Shared answer.');
    await ctx.store.write((tx) => addWriter(tx, shared.conv.id, bob.user.id));
    const res2 = await speak(ctx, { itemId: shared.item.id }, bob);
    expect(res2.status).toBe(200);
    await res2.arrayBuffer();
  });

  test("someone else's answer is 403, an unknown one 404, a user's message or an answer with nothing to read 400", async () => {
    const theirs = await assistantItem(bob, 'Private answer.');
    const before = fake.speeches.length;
    const forbidden = await speak(ctx, { itemId: theirs.item.id }, ann);
    expect([forbidden.status, await forbidden.json()]).toEqual([403, SPEC_ERRORS[403]]);
    const unknown = await speak(ctx, { itemId: 'no-such-item' }, ann);
    expect([unknown.status, await unknown.json()]).toEqual([404, SPEC_ERRORS[404]]);
    const mine = await assistantItem(ann, 'A question?', 'user');
    const notAnswer = await speak(ctx, { itemId: mine.item.id }, ann);
    expect(notAnswer.status).toBe(400);
    expect(((await notAnswer.json()) as any).data.issues).toEqual([{ path: ['itemId'], message: 'not an assistant answer' }]);
    const codeOnly = await assistantItem(ann, '```\nls -la\n```');
    expect(((await (await speak(ctx, { itemId: codeOnly.item.id }, ann)).json()) as any).data.issues[0].message).toBe('the answer has no text to read');
    expect(fake.speeches.length).toBe(before);
    // Access comes first: a server without speech still answers 403 for someone else's answer.
    const off = await createTestContext({ users });
    const offItem = await off.store.read(function* (tx) {
      const c = yield* createConversation(tx, { ownerId: off.users[1]!.user.id });
      return yield* appendItem(tx, { conversationId: c.id, role: 'assistant', content: 'x' });
    });
    expect((await speak(off, { itemId: offItem.id }, off.users[0]!)).status).toBe(403);
  });

  test('too long (PARLEY_TTS_MAX_CHARS, counted in characters): 400 naming the field; exactly the limit passes', async () => {
    const before = fake.speeches.length;
    const long = await speak(ctx, { text: 'a'.repeat(MAX_CHARS + 1) });
    expect(long.status).toBe(400);
    expect(((await long.json()) as any).data.issues).toEqual([{ path: ['text'], message: `${MAX_CHARS + 1} characters, longer than the ${MAX_CHARS} this server reads at once (PARLEY_TTS_MAX_CHARS)` }]);
    const { item } = await assistantItem(ann, 'word '.repeat(MAX_CHARS));
    const longItem = await speak(ctx, { itemId: item.id }, ann);
    expect(((await longItem.json()) as any).data.issues[0].path).toEqual(['itemId']);
    expect(fake.speeches.length).toBe(before);
    // 200 emoji are 400 UTF-16 units but 200 characters.
    const emoji = await speak(ctx, { text: '🙂'.repeat(MAX_CHARS) });
    expect(emoji.status).toBe(200);
    await emoji.arrayBuffer();
  });

  test('exactly one of text and itemId; blank text is refused', async () => {
    const { item } = await assistantItem(ann, 'x');
    for (const input of [{}, { text: 'a', itemId: item.id }, { voice: 'alloy' }, { text: '   ' }]) expect((await speak(ctx, input)).status).toBe(400);
  });

  test("upstream failures: Parley's own errors before the first byte, nothing of the server's words", async () => {
    const cases: [number, number, string][] = [
      [500, 502, 'The text-to-speech server failed with a server error (HTTP 500).'],
      [400, 400, 'The text-to-speech server refused the request; check the voice and format (HTTP 400).'],
      [401, 502, "The text-to-speech server refused Parley's API key (HTTP 401)."],
    ];
    const original = fake.speech;
    try {
      for (const [fail, status, message] of cases) {
        fake.speech = () => ({ fail, message: 'voice "xx" not found in /models/kokoro-v1.pth' });
        const res = await speak(ctx, { text: 'Hi.' });
        const body = (await res.json()) as any;
        expect({ fail, status: res.status, message: body.message }).toEqual({ fail, status, message });
        expect(JSON.stringify(body)).not.toMatch(/kokoro|models/);
      }
      // 200 with JSON is no audio.
      fake.speech = () => ({ chunks: [new TextEncoder().encode('{"error":"oops"}')], contentType: 'application/json' });
      const json = await speak(ctx, { text: 'Hi.' });
      expect([json.status, ((await json.json()) as any).message]).toEqual([502, 'The text-to-speech server answered without audio.']);
    } finally {
      fake.speech = original;
    }
    const gone = await createTestContext({ users, config: { ...voiceConfig, ttsBaseUrl: 'http://127.0.0.1:9/v1' } });
    const res = await speak(gone, { text: 'Hi.' }, gone.users[0]!);
    expect([res.status, ((await res.json()) as any).message]).toEqual([502, 'The text-to-speech server could not be reached.']);
  });
});

describe('voice and the rest of the API', () => {
  test("both count against the per-user `ai` rate limit; an upload over it is refused unread", async () => {
    const limited = await createTestContext({ users, config: { ...voiceConfig, rateLimitAi: { capacity: 1, perMs: 60_000 } } });
    const me = limited.users[0]!;
    expect((await transcribe(limited, form({ data: webm }), me)).status).toBe(200);
    const u = countedUpload(4 * 1024);
    const again = await limited.app.handle(uploadRequest(u, { 'x-api-key': me.key }));
    expect(again.status).toBe(429);
    expect(again.headers.get('retry-after')).toBeTruthy();
    expect(u.counter.read).toBe(0);
    const first = await speak(limited, { text: 'Hi.' }, me);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    expect((await speak(limited, { text: 'Hi.' }, me)).status).toBe(429);
    // Another user has their own allowance.
    expect((await transcribe(limited, form({ data: webm }), limited.users[1]!)).status).toBe(200);
  });

  test('OpenAPI: the upload as multipart/form-data with its file part and limit, the speech as audio types', async () => {
    const spec = (await (await ctx.app.handle(new Request('http://localhost/api/openapi.json'))).json()) as any;
    const upload = spec.paths['/api/audio/transcribe'].post;
    expect(Object.keys(upload.requestBody.content)).toEqual(['multipart/form-data']);
    const schema = upload.requestBody.content['multipart/form-data'].schema;
    expect(schema.required).toEqual(['file']);
    expect(Object.keys(schema.properties).sort()).toEqual(['file', 'language', 'prompt']);
    expect(upload.requestBody['x-max-body-bytes']).toBe(MAX_BYTES + 64 * 1024);
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '413', '415', '429', '502', '503']));
    const speech = spec.paths['/api/audio/speak'].post;
    expect(Object.keys(speech.responses['200'].content)).toEqual(['audio/mpeg', 'audio/ogg; codecs=opus', 'audio/aac', 'audio/flac', 'audio/wav', 'audio/pcm']);
    expect(speech.requestBody.content['application/json'].schema.properties.format.anyOf.map((b: any) => b.const)).toEqual(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']);
  });

  test('doctor: each server reachable, its key refused, unreachable, or not set up', async () => {
    expect(await probeVoice(testConfig(voiceConfig), 'stt')).toEqual({ name: 'speech to text', status: 'ok', detail: `${fake.url} reachable (GET /models: HTTP 404)` });
    expect((await probeVoice(testConfig(voiceConfig), 'tts')).status).toBe('ok');
    const picky = Bun.serve({ port: 0, fetch: () => new Response('no', { status: 401 }) });
    try {
      expect(await probeVoice(testConfig({ ttsBaseUrl: `http://127.0.0.1:${picky.port}/v1` }), 'tts')).toMatchObject({ status: 'fail', fix: 'set a valid PARLEY_TTS_API_KEY' });
    } finally {
      picky.stop(true);
    }
    expect(await probeVoice(testConfig({ sttBaseUrl: 'http://127.0.0.1:9/v1' }), 'stt')).toMatchObject({ status: 'fail', fix: 'start the server, or fix PARLEY_STT_BASE_URL (it usually ends in /v1)' });
    expect(await probeVoice(testConfig(), 'tts')).toEqual({ name: 'text to speech', status: 'skip', detail: 'PARLEY_TTS_BASE_URL is empty (audio/speak answers 503)' });
  });
});
