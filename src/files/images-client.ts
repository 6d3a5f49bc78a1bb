import OpenAI from 'openai';
import type { Config } from '../config';
import { fetchWithoutBunTimeout } from '../ai/upstream';
import { fetchPolicy, safeFetch, SafeFetchError } from '../net/safe-fetch';
import { keyedFetch, refusedRedirectMessage, refusedRedirectOf } from '../net/keyed-fetch';
import type { CallUsage } from '../ai/ai.types';
import { reportedUsage } from '../ai/call-usage';

/**
 * A failure of the images server, said safely: `message` may be shown to the user and the model
 * (what went wrong, the HTTP status, never the server's own text, its address or the key);
 * `detail` is for the operator's log.
 */
export class ImagesError extends Error {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'ImagesError';
  }
}

/**
 * `signal`: the caller's own stop (a cancelled turn), besides the timeout. `onUsage`: the tokens
 * the server reports for the image (OpenAI's GPT image models), once it answered with one.
 */
export type ImageRequest = { prompt: string; image?: File; signal?: AbortSignal; onUsage?: (usage: CallUsage | undefined) => void };

// One client per configuration object (each app, each test's app, has its own).
const clients = new WeakMap<Config, OpenAI>();

/**
 * Servers found to refuse `response_format` (OpenAI's GPT image models answer base64 anyway and
 * refuse the parameter), per configuration: asked once, then never again.
 */
const refusesFormat = new WeakSet<Config>();

/** The configured images server's client, or undefined when `PARLEY_IMAGES_BASE_URL` is empty. */
export function imagesClient(config: Config): OpenAI | undefined {
  if (!config.imagesBaseUrl) return undefined;
  let client = clients.get(config);
  // No retries: an image costs money and minutes; the model may call the tool again.
  if (!client) {
    client = new OpenAI({ apiKey: config.imagesApiKey ?? 'none', baseURL: config.imagesBaseUrl, maxRetries: 0, fetch: keyedFetch(fetchWithoutBunTimeout) });
    clients.set(config, client);
  }
  return client;
}

/**
 * One image through `POST <PARLEY_IMAGES_BASE_URL>/images/generations` (or `/images/edits` with
 * `image`), its bytes. Base64 is asked for where the parameter is taken; an answer with a URL is
 * downloaded through the guarded fetch. The answer is read up to what one file may be
 * (`PARLEY_FILES_MAX_BYTES`, in base64) and only its first image is kept. The whole exchange is
 * bounded by `PARLEY_IMAGES_TIMEOUT_S`.
 */
export async function requestImage(config: Config, req: ImageRequest): Promise<Uint8Array> {
  const client = imagesClient(config);
  if (!client) throw new ImagesError('Image generation is not set up on this server (PARLEY_IMAGES_BASE_URL).');
  const timeoutMs = config.imagesTimeoutS * 1000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
  const timedOut = () => new ImagesError(`The image server did not answer within ${config.imagesTimeoutS} seconds (PARLEY_IMAGES_TIMEOUT_S).`);
  const ask = async (withFormat: boolean) => {
    const params = {
      model: config.imagesModel,
      prompt: req.prompt,
      n: 1,
      ...(config.imagesSize ? { size: config.imagesSize } : {}),
      ...(withFormat ? { response_format: 'b64_json' as const } : {}),
    };
    const opts = { signal, timeout: timeoutMs };
    const res = req.image ? await client.images.edit({ ...params, image: req.image }, opts).asResponse() : await client.images.generate(params, opts).asResponse();
    return JSON.parse(new TextDecoder().decode(await readAtMost(res, answerLimit(config.filesMaxBytes)))) as unknown;
  };
  let answer: unknown;
  try {
    const withFormat = !refusesFormat.has(config) && !/^(gpt-image|chatgpt-image)/i.test(config.imagesModel);
    try {
      answer = await ask(withFormat);
    } catch (err) {
      if (!withFormat || !refusedFormat(err)) throw err;
      refusesFormat.add(config);
      answer = await ask(false);
    }
  } catch (err) {
    if (req.signal?.aborted) throw new ImagesError('The image request was cancelled.');
    if (deadline.aborted) throw timedOut();
    throw describeImagesError(err, config);
  }
  const first = (answer as { data?: unknown })?.data;
  const item = (Array.isArray(first) ? first[0] : undefined) as { b64_json?: unknown; url?: unknown } | undefined;
  if (item) req.onUsage?.(reportedUsage((answer as { usage?: unknown }).usage));
  if (typeof item?.b64_json === 'string' && item.b64_json) return Buffer.from(item.b64_json, 'base64');
  if (typeof item?.url === 'string' && item.url) return downloadImage(config, item.url, signal).catch((err) => Promise.reject(deadline.aborted && !req.signal?.aborted ? timedOut() : err));
  throw new ImagesError('The image server answered without an image.', JSON.stringify(answer).slice(0, 300));
}

/** Base64 of the largest file Parley keeps, and room for the JSON around it. */
const answerLimit = (maxBytes: number) => Math.ceil(maxBytes / 3) * 4 + 64 * 1024;

function refusedFormat(err: unknown): boolean {
  return err instanceof OpenAI.APIError && err.status === 400 && (err.param === 'response_format' || /response_format/i.test(err.message));
}

/**
 * An image the server left at a URL (dall-e's `url` answers, LocalAI's generated-images folder).
 * Only the images server's own host may be private (it is the admin's choice, often this
 * machine); any other address is held to the rules of every server-side fetch, and only the
 * images server's own origin is sent the key.
 */
async function downloadImage(config: Config, url: string, signal: AbortSignal): Promise<Uint8Array> {
  const data = url.match(/^data:image\/[\w.+-]+;base64,(.*)$/s);
  if (data) return Buffer.from(data[1]!, 'base64');
  const own = new URL(config.imagesBaseUrl!);
  let target: URL;
  try {
    target = new URL(url, own);
  } catch {
    throw new ImagesError('The image server answered with an address that is not a URL.');
  }
  const policy = fetchPolicy(config);
  try {
    const res = await safeFetch(target, {
      ...policy,
      allowHosts: [...policy.allowHosts, own.hostname],
      headers: target.origin === own.origin && config.imagesApiKey ? { authorization: `Bearer ${config.imagesApiKey}` } : {},
      maxBytes: config.filesMaxBytes,
      timeoutMs: config.imagesTimeoutS * 1000,
      signal,
    });
    if (res.status !== 200) throw new ImagesError(`The image could not be downloaded from where the image server left it (HTTP ${res.status}).`);
    return res.bytes;
  } catch (err) {
    if (err instanceof ImagesError) throw err;
    if (err instanceof SafeFetchError) {
      const why: Record<string, string> = {
        PRIVATE_ADDRESS: 'it is on a private network (PARLEY_FETCH_ALLOW_HOSTS)',
        TOO_LARGE: `it is larger than ${config.filesMaxBytes} bytes (PARLEY_FILES_MAX_BYTES)`,
        SCHEME: 'its address is not http or https',
        TIMEOUT: 'it took too long',
      };
      throw new ImagesError(`The image could not be downloaded from where the image server left it: ${why[err.reason] ?? 'it could not be reached'}.`, err.message);
    }
    throw new ImagesError('The image could not be downloaded from where the image server left it.', err instanceof Error ? err.message : String(err));
  }
}

/** The body, refused past `max` bytes (declared or counted) without reading further. */
async function readAtMost(res: Response, max: number): Promise<Uint8Array> {
  const tooLarge = () => new ImagesError(`The image server answered more than one file may hold (PARLEY_FILES_MAX_BYTES).`);
  if (Number(res.headers.get('content-length') ?? 0) > max) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    if (size > max) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** What the images server's failure means, safely (`ImagesError`). */
function describeImagesError(err: unknown, config: Config): ImagesError {
  if (err instanceof ImagesError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  const redirect = refusedRedirectOf(err);
  if (redirect) return new ImagesError(refusedRedirectMessage('The image server', 'PARLEY_IMAGES_BASE_URL'), redirect.message);
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new ImagesError(`The image server did not answer within ${config.imagesTimeoutS} seconds (PARLEY_IMAGES_TIMEOUT_S).`, detail);
  if (err instanceof OpenAI.APIConnectionError) return new ImagesError('The image server could not be reached.', detail);
  if (!(err instanceof OpenAI.APIError) || !err.status) return new ImagesError('The image server failed.', detail);
  const status = err.status;
  const say = (what: string) => new ImagesError(`${what} (HTTP ${status}).`, detail);
  if (status === 401 || status === 403) return say("The image server refused Parley's API key");
  if (status === 404) return say('The image server does not know this model or offers no such operation');
  if (status === 429) return say('The image server is busy or over its limit; try again later');
  // OpenAI's safety system (`moderation_blocked`, dall-e's `content_policy_violation`): the model
  // can tell the user and try other words.
  if (status < 500 && /moderation|content_policy|safety/i.test(`${err.code ?? ''} ${detail}`)) return say('The image server refused this prompt under its content policy');
  if (status >= 500) return say('The image server failed with a server error');
  return say('The image server refused the request');
}
