import OpenAI from 'openai';
import { rm } from 'node:fs/promises';
import { fetchWithoutBunTimeout } from '../ai/upstream';
import { keyedFetch, refusedRedirectMessage, refusedRedirectOf } from '../net/keyed-fetch';
import type { VideoService } from '../connections/adapters';

/**
 * A videos server through OpenAI's Videos API (docs/video.md): `POST /videos` starts a job,
 * `GET /videos/{id}` says how it stands, `GET /videos/{id}/content` is the MP4. Through the
 * official SDK, so the wire format is OpenAI's own (the create is `multipart/form-data`).
 */

/**
 * A failure of the videos server, said safely: `message` may be shown to the user and the model
 * (what went wrong, the HTTP status; never the server's own text, its address or the key);
 * `detail` is for the operator's log.
 */
export class VideoError extends Error {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'VideoError';
  }
}

/** The interface's aspect ratios and the size each is asked as (OpenAI's landscape and portrait 720p; a square where a server takes one). */
export const ASPECT_RATIOS = ['16:9', '1:1', '9:16'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];
const SIZE_OF: Record<AspectRatio, string> = { '16:9': '1280x720', '1:1': '720x720', '9:16': '720x1280' };

export interface VideoJob {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress?: number;
  /** A failed job's reason, as the server put it (for the log; the user is told `failedMessage`). */
  error?: { code?: string; message?: string } | null;
}

// One client per service object: the resolver builds one per connection version.
const clients = new WeakMap<VideoService, OpenAI>();

function clientOf(svc: VideoService): OpenAI {
  let client = clients.get(svc);
  // No retries: a video costs money and minutes; polling retries by itself.
  if (!client) {
    client = new OpenAI({ apiKey: svc.apiKey ?? 'none', baseURL: svc.baseUrl, maxRetries: 0, fetch: keyedFetch(fetchWithoutBunTimeout) });
    clients.set(svc, client);
  }
  return client;
}

/** Starts a job. OpenAI takes no negative prompt: it is folded into the prompt as what to avoid. */
export async function createVideoJob(svc: VideoService, req: { prompt: string; negativePrompt?: string; aspectRatio: AspectRatio }, signal: AbortSignal): Promise<VideoJob> {
  const prompt = req.negativePrompt ? `${req.prompt} (avoid: ${req.negativePrompt})` : req.prompt;
  try {
    const body = { prompt, model: svc.model, seconds: String(svc.seconds), size: SIZE_OF[req.aspectRatio] } as OpenAI.VideoCreateParams;
    return jobOf(await clientOf(svc).videos.create(body, { signal }));
  } catch (err) {
    throw describeVideoError(err);
  }
}

export async function readVideoJob(svc: VideoService, id: string, signal: AbortSignal): Promise<VideoJob> {
  try {
    return jobOf(await clientOf(svc).videos.retrieve(id, { signal }));
  } catch (err) {
    throw describeVideoError(err);
  }
}

function jobOf(v: unknown): VideoJob {
  const job = v as Partial<VideoJob> | undefined;
  if (!job || typeof job.id !== 'string' || !job.id || !['queued', 'in_progress', 'completed', 'failed'].includes(String(job.status)))
    throw new VideoError('The video server answered something that is not a video job.', JSON.stringify(v)?.slice(0, 300));
  return { id: job.id, status: job.status!, progress: job.progress, error: job.error ?? null };
}

/**
 * A finished job's video streamed to `path`, never held whole in memory, and stopped past
 * `maxBytes` (declared or counted; the partial file is removed). Its size and SHA-256.
 */
export async function downloadVideo(svc: VideoService, id: string, path: string, maxBytes: number, signal: AbortSignal): Promise<{ size: number; sha256: string; head: Uint8Array }> {
  const tooLarge = () => new VideoError(`The video is larger than Parley keeps (${maxBytes} bytes, PARLEY_VIDEO_MAX_BYTES).`);
  let res: Response;
  try {
    res = await clientOf(svc).videos.downloadContent(id, { variant: 'video' }, { signal });
  } catch (err) {
    throw describeVideoError(err);
  }
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const hasher = new Bun.CryptoHasher('sha256');
  const writer = Bun.file(path).writer();
  let size = 0;
  const head: Uint8Array[] = [];
  let headSize = 0;
  try {
    for await (const chunk of res.body ?? []) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge();
      if (headSize < 4096) {
        head.push(chunk.subarray(0, 4096 - headSize));
        headSize += Math.min(chunk.byteLength, 4096 - headSize);
      }
      hasher.update(chunk);
      writer.write(chunk);
      await writer.flush();
    }
    await writer.end();
  } catch (err) {
    await Promise.resolve(writer.end()).catch(() => {});
    await rm(path, { force: true });
    if (err instanceof VideoError) throw err;
    throw new VideoError('The video could not be downloaded from the video server.', err instanceof Error ? err.message : String(err));
  }
  return { size, sha256: hasher.digest('hex'), head: Buffer.concat(head) };
}

/** What the videos server's failure means, safely (`VideoError`). */
export function describeVideoError(err: unknown): VideoError {
  if (err instanceof VideoError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  const redirect = refusedRedirectOf(err);
  if (redirect) return new VideoError(refusedRedirectMessage('The video server', "the video connection's base URL"), redirect.message);
  if (err instanceof OpenAI.APIUserAbortError) return new VideoError('The video request was cancelled.', detail);
  if (err instanceof OpenAI.APIConnectionError) return new VideoError('The video server could not be reached.', detail);
  if (!(err instanceof OpenAI.APIError) || !err.status) return new VideoError('The video server failed.', detail);
  const status = err.status;
  const say = (what: string) => new VideoError(`${what} (HTTP ${status}).`, detail);
  if (status === 401 || status === 403) return say("The video server refused Parley's API key");
  if (status === 404) return say('The video server does not know this model, job or operation');
  if (status === 429) return say('The video server is busy or over its limit; try again later');
  if (status < 500 && /moderation|content_policy|safety/i.test(`${err.code ?? ''} ${detail}`)) return say('The video server refused this prompt under its content policy');
  if (status >= 500) return say('The video server failed with a server error');
  return say('The video server refused the request');
}

/** A failed job, told in Parley's words: the server's code names a content-policy refusal, nothing else of its text is passed on. */
export function failedMessage(job: VideoJob): string {
  const code = job.error?.code ?? '';
  if (/moderation|content_policy|safety/i.test(code)) return 'The video server refused this prompt under its content policy.';
  return 'The video server could not make this video (the job failed).';
}
