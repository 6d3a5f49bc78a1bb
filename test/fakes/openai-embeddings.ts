/**
 * A local OpenAI-compatible embeddings server speaking the real wire format:
 * `POST /v1/embeddings`, JSON `{model, input: string | string[], encoding_format?: 'float' |
 * 'base64', dimensions?}`, answered `{object: 'list', data: [{object: 'embedding', index,
 * embedding}], model, usage: {prompt_tokens, total_tokens}}`; with `base64`, each embedding is
 * its float32 little-endian bytes in base64, as OpenAI sends them. Refusals are OpenAI's: a
 * missing model or input, an empty string, more than 2,048 inputs, an input past the context
 * (`maxInputChars`), an unknown encoding.
 *
 * The vectors are deterministic and mean something: a bag of words hashed into `dims` slots
 * (signed, so unrelated words cancel rather than add up), after dropping common words, mapping a
 * few synonyms onto one word (physician → doctor, automobile → car) and cutting common endings
 * (invoicing, invoices and invoice all count as "invoic"). Texts sharing words or their stems are
 * close; texts sharing none are orthogonal, except for rare hash collisions. Full-text search
 * matches exact words only, so a query by synonym or another form of a word is found here and
 * not there.
 *
 * Tests script failures (`fail`), make it ignore `encoding_format` as some servers do
 * (`ignoreEncodingFormat`: floats always), swap its model for another under the same name
 * (`weights`) and read what was sent in `requests`.
 */

export interface EmbeddingsRequest {
  model?: string;
  input: string[];
  encodingFormat?: string;
  dimensions?: number;
  authorization: string | null;
}

type Failure = { fail: number; message?: string };

export interface FakeEmbeddings {
  url: string;
  requests: EmbeddingsRequest[];
  /** Answer this instead of embedding (undefined: embed). */
  fail: (req: EmbeddingsRequest) => Failure | undefined;
  /** Answer JSON numbers whatever was asked (some versions of Ollama, LM Studio). */
  ignoreEncodingFormat: boolean;
  /** Refuse an input longer than this, as a model refuses one past its context. */
  maxInputChars: number;
  /** Vector length when the request names none. */
  dims: number;
  /**
   * Which weights the model has: another number is another model served under the same name
   * (llama.cpp started with another model file), whose vectors have nothing to do with these.
   */
  weights: number;
  stop(): void;
}

const STOP_WORDS = new Set('a an and are as at be by for from has have in is it its of on or our that the their this to was were what where which who will with'.split(' '));
const SYNONYMS: Record<string, string> = {
  physician: 'doctor',
  physicians: 'doctor',
  medic: 'doctor',
  automobile: 'car',
  automobiles: 'car',
  vehicle: 'car',
  vehicles: 'car',
  purchase: 'buy',
  purchased: 'buy',
  bought: 'buy',
};
const ENDINGS = ['ations', 'ation', 'ings', 'ing', 'ies', 'es', 'ed', 's', 'e'];

/** The words of `text` as the fake's vectors count them (exported for tests that reason about them). */
export function fakeTerms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((w) => !STOP_WORDS.has(w))
    .map((w) => SYNONYMS[w] ?? w)
    .map((w) => {
      const end = ENDINGS.find((e) => w.endsWith(e) && w.length - e.length >= 3);
      return end ? w.slice(0, -end.length) : w;
    });
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The fake's vector of `text` (with `weights`, another model's): not normalised (Parley scales what it stores). */
export function fakeEmbedding(text: string, dims: number, weights = 0): Float32Array {
  const v = new Float32Array(dims);
  for (const term of fakeTerms(text)) {
    const h = fnv1a(weights ? `${weights}:${term}` : term);
    v[h % dims]! += h & 0x80000000 ? -1 : 1;
  }
  return v;
}

const openAiError = (status: number, message: string, param: string | null = null, code: string | null = null) =>
  Response.json({ error: { message, type: 'invalid_request_error', param, code } }, { status });

export function startFakeEmbeddings(opts: { dims?: number } = {}): FakeEmbeddings {
  const fake: FakeEmbeddings = {
    url: '',
    requests: [],
    fail: () => undefined,
    ignoreEncodingFormat: false,
    maxInputChars: 32_000,
    dims: opts.dims ?? 256,
    weights: 0,
    stop: () => server.stop(true),
  };

  async function embeddings(req: Request): Promise<Response> {
    let body: any;
    try {
      body = await req.json();
    } catch {
      return openAiError(400, 'We could not parse the JSON body of your request.');
    }
    const input: unknown[] = typeof body?.input === 'string' ? [body.input] : Array.isArray(body?.input) ? body.input : [];
    const record: EmbeddingsRequest = {
      model: body?.model,
      input: input.map(String),
      encodingFormat: body?.encoding_format,
      dimensions: body?.dimensions,
      authorization: req.headers.get('authorization'),
    };
    fake.requests.push(record);
    if (typeof body?.model !== 'string' || !body.model) return openAiError(400, "you must provide a model parameter", 'model');
    if (!input.length || input.some((s) => typeof s !== 'string')) return openAiError(400, "'$.input' is invalid. Please check the API reference.", 'input');
    if (input.length > 2048) return openAiError(400, "'$.input' is invalid: at most 2048 inputs.", 'input');
    if (input.some((s) => s === '')) return openAiError(400, "'$.input' is invalid: an input must not be empty.", 'input');
    if (body.encoding_format !== undefined && body.encoding_format !== 'float' && body.encoding_format !== 'base64')
      return openAiError(400, `Invalid value: '${body.encoding_format}'. Supported values are: 'float' and 'base64'.`, 'encoding_format');
    const tooLong = record.input.findIndex((s) => s.length > fake.maxInputChars);
    if (tooLong >= 0)
      return openAiError(400, `This model's maximum context length is ${Math.floor(fake.maxInputChars / 4)} tokens, however you requested more (input ${tooLong}).`, null, 'context_length_exceeded');
    const failure = fake.fail(record);
    if (failure) return openAiError(failure.fail, failure.message ?? 'fake upstream failure');
    const dims = Number.isInteger(body.dimensions) && body.dimensions > 0 ? body.dimensions : fake.dims;
    const asBase64 = body.encoding_format === 'base64' && !fake.ignoreEncodingFormat;
    const tokens = record.input.reduce((n, s) => n + Math.ceil(s.length / 4), 0);
    return Response.json({
      object: 'list',
      data: record.input.map((text, index) => {
        const v = fakeEmbedding(text, dims, fake.weights);
        return { object: 'embedding', index, embedding: asBase64 ? Buffer.from(v.buffer).toString('base64') : Array.from(v) };
      }),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === 'POST' && path === '/v1/embeddings') return embeddings(req);
      return openAiError(404, `Unknown request URL: ${req.method} ${path}`);
    },
  });
  fake.url = `http://127.0.0.1:${server.port}/v1`;
  return fake;
}
