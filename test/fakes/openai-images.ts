/**
 * A local OpenAI-compatible images server speaking the real wire formats:
 * - `POST /v1/images/generations`: JSON `{model, prompt, n, size, response_format?}`.
 * - `POST /v1/images/edits`: a `multipart/form-data` upload parsed for real (Bun's own parser,
 *   not the one Parley receives uploads with), with the `image` file part and the `prompt`,
 *   `model`, `n`, `size` and `response_format` fields.
 * Both answer `{created, data: [{b64_json}]}` with a real PNG of the size asked for (made with
 * @napi-rs/image), or `{created, data: [{url}]}` naming `GET /generated/<n>.png` on this server
 * when asked for `url` or scripted so. Models named like `gpt-image-1` refuse `response_format`
 * with OpenAI's own error, as OpenAI does. Tests script the answers (`answer`) and read what was
 * sent in `requests`.
 */
import { Transformer } from '@napi-rs/image';

export interface ImagesRequest {
  path: '/v1/images/generations' | '/v1/images/edits';
  model?: string;
  prompt?: string;
  n?: number;
  size?: string;
  responseFormat?: string;
  /** The edit's `image` part: its bytes, name and declared type. */
  image?: { bytes: Uint8Array; filename: string; type: string };
  authorization: string | null;
}

/** What the fake answers: an image (default: a PNG of the size asked for), raw bytes, a failure, or an answer of its own. */
export type ImagesAnswer =
  | { png?: Uint8Array; bytes?: Uint8Array; as?: 'b64_json' | 'url'; url?: string; count?: number }
  | { fail: number; message?: string; code?: string }
  | { json: unknown };

export interface FakeImages {
  url: string;
  /** The server's origin (`http://127.0.0.1:<port>`), for URLs of generated images. */
  origin: string;
  requests: ImagesRequest[];
  answer: (req: ImagesRequest) => ImagesAnswer;
  /** Wait this long before answering (a model at work). */
  delayMs: number;
  /** `GET /generated/...` requests served. */
  downloads: string[];
  stop(): void;
}

const openAiError = (status: number, message: string, extra: { param?: string; code?: string } = {}) =>
  Response.json({ error: { message, type: 'invalid_request_error', param: extra.param ?? null, code: extra.code ?? null } }, { status });

/** A real PNG, `w` × `h`, of one colour. */
export function solidPng(w: number, h: number, rgba: [number, number, number, number] = [40, 120, 200, 255]): Uint8Array {
  const pixels = new Uint8Array(w * h * 4);
  for (let i = 0; i < pixels.length; i += 4) pixels.set(rgba, i);
  return Transformer.fromRgbaPixels(pixels, w, h).pngSync();
}

const sizeOf = (size: string | undefined): [number, number] => {
  const m = size?.match(/^(\d+)x(\d+)$/);
  return m ? [Number(m[1]), Number(m[2])] : [1024, 1024];
};

export function startFakeImages(): FakeImages {
  const generated = new Map<string, Uint8Array>();
  let n = 0;
  const fake: FakeImages = {
    url: '',
    origin: '',
    requests: [],
    answer: () => ({}),
    delayMs: 0,
    downloads: [],
    stop: () => server.stop(true),
  };

  async function respond(record: ImagesRequest): Promise<Response> {
    fake.requests.push(record);
    if (!record.prompt) return openAiError(400, "Missing required parameter: 'prompt'.", { param: 'prompt', code: 'missing_required_parameter' });
    if (record.responseFormat !== undefined && /^(gpt-image|chatgpt-image)/.test(record.model ?? ''))
      return openAiError(400, "Unknown parameter: 'response_format'.", { param: 'response_format', code: 'unknown_parameter' });
    if (fake.delayMs) await Bun.sleep(fake.delayMs);
    const answer = fake.answer(record);
    if ('fail' in answer) return openAiError(answer.fail, answer.message ?? 'fake upstream failure', { code: answer.code });
    if ('json' in answer) return Response.json(answer.json);
    const bytes = answer.bytes ?? answer.png ?? solidPng(...sizeOf(record.size), record.image ? [200, 60, 60, 255] : [40, 120, 200, 255]);
    const asUrl = answer.as === 'url' || (answer.as === undefined && record.responseFormat === 'url');
    const item = () => {
      if (!asUrl) return { b64_json: Buffer.from(bytes).toString('base64') };
      if (answer.url) return { url: answer.url };
      const name = `/generated/${++n}.png`;
      generated.set(name, bytes);
      return { url: `${fake.origin}${name}` };
    };
    return Response.json({ created: Math.floor(Date.now() / 1000), data: Array.from({ length: answer.count ?? 1 }, item) });
  }

  async function edit(req: Request): Promise<Response> {
    let form: Awaited<ReturnType<Request['formData']>>;
    try {
      form = await req.formData();
    } catch {
      return openAiError(400, 'Could not parse multipart form');
    }
    const text = (name: string) => (typeof form.get(name) === 'string' ? (form.get(name) as string) : undefined);
    const image = form.get('image');
    if (!(image instanceof Blob)) return openAiError(400, "Missing required parameter: 'image'.", { param: 'image', code: 'missing_required_parameter' });
    return respond({
      path: '/v1/images/edits',
      model: text('model'),
      prompt: text('prompt'),
      n: text('n') === undefined ? undefined : Number(text('n')),
      size: text('size'),
      responseFormat: text('response_format'),
      image: { bytes: new Uint8Array(await image.arrayBuffer()), filename: (image as File).name ?? '', type: image.type },
      authorization: req.headers.get('authorization'),
    });
  }

  async function generate(req: Request): Promise<Response> {
    let body: any;
    try {
      body = await req.json();
    } catch {
      return openAiError(400, 'We could not parse the JSON body of your request.');
    }
    return respond({
      path: '/v1/images/generations',
      model: body.model,
      prompt: body.prompt,
      n: body.n,
      size: body.size,
      responseFormat: body.response_format,
      authorization: req.headers.get('authorization'),
    });
  }

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === 'POST' && path === '/v1/images/generations') return generate(req);
      if (req.method === 'POST' && path === '/v1/images/edits') return edit(req);
      if (req.method === 'GET' && generated.has(path)) {
        fake.downloads.push(path);
        return new Response(generated.get(path) as Uint8Array<ArrayBuffer>, { headers: { 'content-type': 'image/png' } });
      }
      return openAiError(404, `Unknown request URL: ${req.method} ${path}`);
    },
  });
  fake.origin = `http://127.0.0.1:${server.port}`;
  fake.url = `${fake.origin}/v1`;
  return fake;
}
