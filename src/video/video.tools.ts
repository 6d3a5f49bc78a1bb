import type { AiEvent, AiTool } from '../ai/ai.types';
import type { AppDeps } from '../deps';
import type { FileRow, VideoJobRow } from '../db/schema';
import type { VideoService } from '../connections/adapters';
import type { ToolSource } from '../tools/tool.types';
import { AppError } from '../http/errors';
import { addFile } from '../files/add-file';
import { readableFile } from '../files/file.routes';
import { contentUrl } from '../files/file.view';
import { tempName } from '../files/receive-upload';
import { sniffVideo } from '../files/sniff-file';
import { rm } from 'node:fs/promises';
import { meterCall } from '../usage/meter-calls';
import { QuotaError } from '../usage/usage.types';
import { ASPECT_RATIOS, createVideoJob, downloadVideo, failedMessage, readVideoJob, VideoError, type AspectRatio, type VideoJob } from './videos-client';
import { endVideoJob, findVideoJob, insertVideoJob } from './video-job.store';

/** Polls in a row that may fail before the call gives up. */
const POLL_MISSES = 3;

/** Longest prompt taken (and negative prompt): what the videos APIs take comfortably. */
export const VIDEO_PROMPT_MAX_CHARS = 4000;

/** The video tool, to the registry (src/tools/): offered with an enabled `video` connection. */
export const videoToolSource: ToolSource = {
  id: 'video',
  label: 'Video',
  priority: 60,
  async status(deps) {
    return (await deps.connections.video()) ? {} : { unavailable: 'No video connection is enabled: add one of kind video under Connections (docs/video.md).' };
  },
  async tools(turn) {
    const svc = await turn.deps.connections.video();
    if (!svc) return [];
    return [videoTool(turn.deps, svc, { userId: turn.user.id, responseId: turn.responseId, apiKeyId: turn.apiKeyId, signal: turn.signal })];
  },
};

type Where = { userId: string; responseId: string; apiKeyId?: string; signal?: AbortSignal };
type Made = { file: FileRow } | { error: string };

/**
 * `generate_video` (docs/video.md): a job on the videos server, polled until it ends, its video
 * streamed into the user's files. The job is recorded (`video_jobs`) as soon as the server takes
 * it, keyed by the call, so the same call run again after a restart polls that job rather than
 * paying for a second. A failure is the call's output and a `.error` event, never the turn's end.
 */
export function videoTool(deps: AppDeps, svc: VideoService, where: Where): AiTool {
  return {
    name: 'generate_video',
    description:
      'Make a short video clip from a description. It takes minutes; the video is shown to the user and kept in their files. Describe the subject, action, setting, camera and style.',
    parameters: {
      type: 'object',
      properties: {
        prompt: { type: 'string', description: `What the clip shows (at most ${VIDEO_PROMPT_MAX_CHARS} characters)` },
        negative_prompt: { type: 'string', description: 'What the clip must not show (optional)' },
        aspect_ratio: { type: 'string', enum: [...ASPECT_RATIOS], description: 'The frame: 16:9 landscape (default), 1:1 square, 9:16 portrait' },
      },
      required: ['prompt'],
    },
    async run(args, emit, callId, callKey) {
      const asked = argsOf(args);
      if ('refusal' in asked) return asked.refusal;
      emit({
        type: 'generate_video.in_progress',
        itemId: callId,
        prompt: asked.prompt,
        ...(asked.negativePrompt ? { negative_prompt: asked.negativePrompt } : {}),
        aspect_ratio: asked.aspectRatio,
      });
      const made = await makeVideo(deps, svc, where, callKey, asked);
      if ('error' in made) {
        emit({ type: 'generate_video.error', itemId: callId, error: made.error });
        return `No video was made. ${made.error}`;
      }
      emit(completedEvent(callId, made.file, svc.model));
      return `The video is made and shown to the user: file ${made.file.id} (${made.file.mimeType}, ${made.file.size} bytes, ${svc.seconds} seconds).`;
    },
  };
}

const completedEvent = (itemId: string, f: FileRow, model: string): AiEvent => ({
  type: 'generate_video.completed',
  itemId,
  video: { url: contentUrl(f.id), fileId: f.id, mimeType: f.mimeType },
  model,
});

type Asked = { prompt: string; negativePrompt?: string; aspectRatio: AspectRatio };

function argsOf(args: Record<string, unknown>): Asked | { refusal: string } {
  const prompt = typeof args.prompt === 'string' ? args.prompt.trim() : '';
  if (!prompt) return { refusal: 'Nothing was made: the prompt is empty. Describe the video.' };
  const negative = typeof args.negative_prompt === 'string' ? args.negative_prompt.trim() : '';
  for (const [what, text] of [['prompt', prompt], ['negative_prompt', negative]] as const)
    if (text.length > VIDEO_PROMPT_MAX_CHARS) return { refusal: `Nothing was made: ${what} is at most ${VIDEO_PROMPT_MAX_CHARS} characters and this one has ${text.length}. Say it shorter.` };
  const ratio = args.aspect_ratio ?? '16:9';
  if (!ASPECT_RATIOS.includes(ratio as AspectRatio)) return { refusal: `Nothing was made: aspect_ratio is one of ${ASPECT_RATIOS.join(', ')}.` };
  return { prompt, ...(negative ? { negativePrompt: negative } : {}), aspectRatio: ratio as AspectRatio };
}

/** The video of this call: the one an earlier run kept, else the job's (started now, or earlier and polled). */
async function makeVideo(deps: AppDeps, svc: VideoService, where: Where, callKey: string, asked: Asked): Promise<Made> {
  const fail = (error: string, detail?: string): Made => {
    deps.log.warn('video tool failed', { responseId: where.responseId, callKey, error, ...(detail ? { upstream: detail } : {}) });
    return { error };
  };
  let job = await deps.store.read((tx) => findVideoJob(tx, where.responseId, callKey));
  if (job?.status === 'completed') {
    const file = await readableFile(deps, job.fileId!, where.userId).catch(() => undefined);
    return file ? { file } : { error: 'The video was made, but its file has been deleted since.' };
  }
  if (job?.status === 'failed') return { error: job.error! };
  const signal = where.signal ?? new AbortController().signal;
  try {
    job ??= await startJob(deps, svc, where, callKey, asked, signal);
  } catch (err) {
    if (err instanceof QuotaError) return fail(err.message);
    if (err instanceof VideoError) return fail(err.message, err.detail);
    deps.log.error('video tool failed', { responseId: where.responseId, callKey, cause: err instanceof Error ? err.stack : String(err) });
    return { error: 'The video server failed.' };
  }
  const ended = await finishJob(deps, svc, where, job, signal).catch((err): Made => {
    if (err instanceof VideoError) return fail(err.message, err.detail);
    deps.log.error('video tool failed', { responseId: where.responseId, callKey, cause: err instanceof Error ? err.stack : String(err) });
    return { error: 'The video could not be kept.' };
  });
  // A cancelled turn leaves the job as it is: the job is the server's, and a resumed turn polls it again.
  if (signal.aborted) return ended;
  const row = job;
  await deps.store.write((tx) => endVideoJob(tx, row.id, 'file' in ended ? { status: 'completed', fileId: ended.file.id } : { status: 'failed', error: ended.error }, deps.now()));
  return ended;
}

/** A new job on the server, metered (docs/usage.md, `video`) and recorded before anything waits on it. */
async function startJob(deps: AppDeps, svc: VideoService, where: Where, callKey: string, asked: Asked, signal: AbortSignal): Promise<VideoJobRow> {
  const usage = { connectionId: svc.connection.id, model: `${svc.connection.name}/${svc.model}`, units: svc.seconds };
  const caller = { userId: where.userId, responseId: where.responseId, apiKeyId: where.apiKeyId };
  const started = await meterCall(deps, { caller, kind: 'video', estimate: { ...usage, estimated: true } }, async () => ({
    value: await createVideoJob(svc, asked, signal),
    usage: { ...usage, estimated: false },
  }));
  return deps.store.write((tx) =>
    insertVideoJob(tx, { responseId: where.responseId, callKey, userId: where.userId, connectionId: svc.connection.id, upstreamId: started.id, model: svc.model }, deps.now()),
  );
}

/** Polls the job until it ends or its time is up (counted from its creation, so a restart does not reset it), then keeps its video. */
async function finishJob(deps: AppDeps, svc: VideoService, where: Where, row: VideoJobRow, signal: AbortSignal): Promise<Made> {
  const deadline = row.createdAt + svc.timeoutS * 1000;
  let job: VideoJob = { id: row.upstreamId, status: 'queued' };
  let misses = 0;
  for (;;) {
    if (signal.aborted) return { error: 'The video request was cancelled.' };
    try {
      job = await readVideoJob(svc, row.upstreamId, signal);
      misses = 0;
    } catch (err) {
      // A poll that fails once (a restart of the server, a dropped connection) is asked again; the job goes on there.
      if (signal.aborted || ++misses >= POLL_MISSES) throw err;
      deps.log.warn('a video job could not be polled: asking again', { responseId: where.responseId, upstreamId: row.upstreamId, cause: err instanceof VideoError ? err.detail : String(err) });
    }
    if (job.status === 'completed' || job.status === 'failed') break;
    if (deps.now() >= deadline) return { error: `The video was not ready within ${svc.timeoutS} seconds (PARLEY_VIDEO_TIMEOUT_S).` };
    await Bun.sleep(Math.min(deps.config.videoPollMs, Math.max(0, deadline - deps.now())));
  }
  if (job.status === 'failed') {
    deps.log.warn('video job failed', { responseId: where.responseId, upstreamId: row.upstreamId, code: job.error?.code, upstream: job.error?.message });
    return { error: failedMessage(job) };
  }
  return keepVideo(deps, svc, where, row, signal);
}

/** The finished video streamed to a temp file, then the user's file (`source` `generated`, their quota). */
async function keepVideo(deps: AppDeps, svc: VideoService, where: Where, row: VideoJobRow, signal: AbortSignal): Promise<Made> {
  const path = await deps.files.tempPath(tempName());
  const got = await downloadVideo(svc, row.upstreamId, path, deps.config.videoMaxBytes, signal);
  // Only a video is kept (an HTML error page answered as the content would pass as a document).
  if (!sniffVideo(got.head)) {
    await rm(path, { force: true });
    return { error: 'The video server answered something that is not a video.' };
  }
  const name = `video-${new Bun.CryptoHasher('sha256').update(`${row.responseId}:${row.callKey}`).digest('hex').slice(0, 16)}`;
  try {
    const file = await addFile(deps, where.userId, { tempPath: path, size: got.size, sha256: got.sha256, filename: `${name}.${got.head[0] === 0x1a ? 'webm' : 'mp4'}`, head: got.head }, 'generated');
    return { file };
  } catch (err) {
    // Parley's own words (not a video, the quota full): safe to show.
    if (err instanceof AppError) return { error: `The video could not be kept: ${err.message}` };
    throw err;
  }
}
