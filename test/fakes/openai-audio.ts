/**
 * A local OpenAI-compatible audio server speaking the real wire formats:
 * - `POST /v1/audio/transcriptions`: a `multipart/form-data` upload, parsed for real (Bun's own
 *   parser, not the one Parley receives uploads with). It requires the `model` and `file` parts,
 *   refuses a file name without one of OpenAI's extensions as OpenAI does, and answers `json`
 *   (`{text}`), `verbose_json` (`{task, language, duration, text, segments}`) or `text`. Models
 *   named like `gpt-4o-transcribe` refuse `verbose_json` with OpenAI's message.
 * - `POST /v1/audio/speech`: JSON `{model, input, voice, response_format}`, answered with chunked
 *   audio bytes, `chunkDelayMs` apart. With `hold`, the first chunk goes out and the rest waits for
 *   `release()`, so a test can see the first bytes arrive while the fake still holds the others.
 * Tests script the answers (`transcribe`, `speech`) and read what was sent in `transcriptions`
 * and `speeches`; a client that left shows as `aborted`.
 */

export interface TranscriptionRequest {
  model: string;
  filename: string;
  type: string;
  size: number;
  head: Uint8Array;
  language?: string;
  prompt?: string;
  responseFormat: string;
  authorization: string | null;
  aborted: boolean;
}

export interface SpeechRequest {
  body: any;
  authorization: string | null;
  /** Chunks written so far. */
  sent: number;
  finished: boolean;
  aborted: boolean;
}

type Failure = { fail: number; message?: string; headers?: Record<string, string> };

export interface FakeAudio {
  url: string;
  transcriptions: TranscriptionRequest[];
  speeches: SpeechRequest[];
  transcribe: (req: TranscriptionRequest) => { text: string; language?: string; duration?: number } | Failure;
  /** Wait this long before answering a transcription (a model at work). */
  transcribeDelayMs: number;
  speech: (body: any) => { chunks: Uint8Array[]; contentType?: string } | Failure;
  chunkDelayMs: number;
  hold: boolean;
  release(): void;
  stop(): void;
}

/** OpenAI's accepted extensions (its "Invalid file format" refusal lists these). */
const EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];

const openAiError = (status: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ error: { message, type: 'invalid_request_error', param: null, code: null } }, { status, headers });

/** Audio-looking bytes for a format: its magic number, then a counter. */
export function fakeAudioChunks(count = 4, size = 1024): Uint8Array[] {
  return Array.from({ length: count }, (_, i) => {
    const chunk = new Uint8Array(size).map((_, j) => (i * 31 + j) & 0xff);
    if (i === 0) chunk.set([0x49, 0x44, 0x33, 0x04]); // "ID3": an mp3's tag
    return chunk;
  });
}

/**
 * Real MP3 a browser plays: MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz, mono) whose side
 * information is all zeros, which decodes to silence, 26 ms a frame. Split into `chunks` for the
 * speech stream.
 */
export function silentMp3(frames = 40, chunks = 4): Uint8Array[] {
  const FRAME = 417; // 144 × 128000 / 44100, no padding
  const all = new Uint8Array(FRAME * frames);
  for (let i = 0; i < frames; i++) all.set([0xff, 0xfb, 0x90, 0xc4], i * FRAME);
  const per = Math.ceil(frames / chunks) * FRAME;
  return Array.from({ length: Math.ceil(all.length / per) }, (_, i) => all.slice(i * per, (i + 1) * per));
}

export function startFakeAudio(): FakeAudio {
  let held = Promise.withResolvers<void>();
  const fake: FakeAudio = {
    url: '',
    transcriptions: [],
    speeches: [],
    transcribe: (r) => ({ text: `  Heard ${r.size} bytes of ${r.filename}.  `, language: 'english', duration: 1.5 }),
    transcribeDelayMs: 0,
    speech: () => ({ chunks: fakeAudioChunks() }),
    chunkDelayMs: 5,
    hold: false,
    release: () => {
      held.resolve();
      held = Promise.withResolvers<void>();
    },
    stop: () => server.stop(true),
  };

  async function transcription(req: Request): Promise<Response> {
    let form: Awaited<ReturnType<Request['formData']>>;
    try {
      form = await req.formData();
    } catch {
      return openAiError(400, 'Could not parse multipart form');
    }
    const file = form.get('file');
    const model = form.get('model');
    if (typeof model !== 'string' || !model) return openAiError(400, "you must provide a model parameter");
    if (!(file instanceof Blob)) return openAiError(400, "1 validation error for Request\nbody -> file\n  field required (type=value_error.missing)");
    const filename = (file as File).name ?? '';
    const ext = filename.split('.').pop()?.toLowerCase() ?? '';
    if (!EXTENSIONS.includes(ext)) return openAiError(400, `Invalid file format. Supported formats: ${JSON.stringify(EXTENSIONS)}`);
    const bytes = new Uint8Array(await file.arrayBuffer());
    const text = (name: string) => (typeof form.get(name) === 'string' ? (form.get(name) as string) : undefined);
    const record: TranscriptionRequest = {
      model,
      filename,
      type: file.type,
      size: bytes.byteLength,
      head: bytes.slice(0, 16),
      language: text('language'),
      prompt: text('prompt'),
      responseFormat: text('response_format') ?? 'json',
      authorization: req.headers.get('authorization'),
      aborted: false,
    };
    fake.transcriptions.push(record);
    req.signal.addEventListener('abort', () => (record.aborted = true));
    if (/gpt-4o/.test(model) && record.responseFormat === 'verbose_json')
      return openAiError(400, `response_format 'verbose_json' is not compatible with model '${model}'. Use 'json' or 'text' instead.`);
    if (fake.transcribeDelayMs) await Bun.sleep(fake.transcribeDelayMs);
    const answer = fake.transcribe(record);
    if ('fail' in answer) return openAiError(answer.fail, answer.message ?? 'fake upstream failure', answer.headers);
    if (record.responseFormat === 'text') return new Response(answer.text, { headers: { 'content-type': 'text/plain' } });
    if (record.responseFormat === 'verbose_json')
      return Response.json({ task: 'transcribe', language: answer.language ?? 'english', duration: answer.duration ?? 0, text: answer.text, segments: [] });
    return Response.json({ text: answer.text, usage: { type: 'duration', seconds: Math.ceil(answer.duration ?? 0) } });
  }

  async function speech(req: Request): Promise<Response> {
    let body: any;
    try {
      body = await req.json();
    } catch {
      return openAiError(400, 'We could not parse the JSON body of your request.');
    }
    if (!body?.model || typeof body.input !== 'string' || !body.voice) return openAiError(400, 'model, input and voice are required');
    const record: SpeechRequest = { body, authorization: req.headers.get('authorization'), sent: 0, finished: false, aborted: false };
    fake.speeches.push(record);
    req.signal.addEventListener('abort', () => (record.aborted = true));
    const answer = fake.speech(body);
    if ('fail' in answer) return openAiError(answer.fail, answer.message ?? 'fake upstream failure', answer.headers);
    const gate = fake.hold ? held.promise : undefined;
    const delay = fake.chunkDelayMs;
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        try {
          for (const [i, chunk] of answer.chunks.entries()) {
            if (i === 1 && gate) await gate;
            else if (i > 0 && delay) await Bun.sleep(delay);
            if (record.aborted) return;
            controller.enqueue(chunk);
            record.sent++;
          }
          record.finished = true;
          controller.close();
        } catch {
          record.aborted = true;
        }
      },
      cancel() {
        record.aborted = true;
      },
    });
    return new Response(stream, { headers: { 'content-type': answer.contentType ?? 'audio/mpeg' } });
  }

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 30,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === 'POST' && path === '/v1/audio/transcriptions') return transcription(req);
      if (req.method === 'POST' && path === '/v1/audio/speech') return speech(req);
      return openAiError(404, `Unknown request URL: ${req.method} ${path}`);
    },
  });
  fake.url = `http://127.0.0.1:${server.port}/v1`;
  return fake;
}
