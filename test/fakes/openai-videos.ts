/**
 * A local OpenAI-compatible videos server speaking the Videos API's wire format:
 * - `POST /v1/videos`: `multipart/form-data` (what OpenAI's SDK sends; parsed with Bun's own
 *   parser) or JSON, fields `prompt`, `model`, `seconds`, `size`; answers the `video` object
 *   `{id: "video_…", object: "video", status: "queued", progress: 0, model, seconds, size, prompt,
 *   created_at, completed_at: null, expires_at: null, error: null, remixed_from_video_id: null}`.
 * - `GET /v1/videos/{id}`: the same object, `in_progress` with a growing `progress` for
 *   `pollsBeforeEnd` polls, then `completed` (with `completed_at`, `expires_at`) or, when
 *   scripted so, `failed` with `error: {code, message}`.
 *   `failPolls` makes the next polls answer 503.
 * - `GET /v1/videos/{id}/content`: the MP4's bytes (`video/mp4`) once completed; before that a
 *   404 with OpenAI's error envelope, as for an unknown id.
 * The "MP4" is a real ISO media box sequence (`ftyp`, then `mdat` filled to the size asked), the
 * bytes Parley sniffs; it is not a decodable clip. Tests script the outcome per job (`plan`) and
 * read what was sent in `requests`.
 */

export interface VideoCreateRequest {
  contentType: string;
  prompt?: string;
  model?: string;
  seconds?: string;
  size?: string;
  authorization: string | null;
}

export type VideoPlan =
  | { outcome: 'completed'; pollsBeforeEnd?: number; bytes?: Uint8Array }
  | { outcome: 'failed'; pollsBeforeEnd?: number; code?: string; message?: string }
  /** The create itself is refused with this status. */
  | { outcome: 'refused'; status: number; code?: string; message?: string }
  /** Never ends (a stuck job). */
  | { outcome: 'stuck' };

export interface FakeVideos {
  url: string;
  requests: VideoCreateRequest[];
  /** Every request's method and path, in order. */
  log: string[];
  plan: (req: VideoCreateRequest) => VideoPlan;
  /** The next this many polls answer 503 (a server restarting). */
  failPolls: number;
  /** Every job still running ends well at its next poll (a job that finished while Parley was down). */
  endAll(): void;
  stop(): void;
}

interface Job {
  id: string;
  plan: VideoPlan;
  polls: number;
  body: VideoCreateRequest;
  createdAt: number;
}

const openAiError = (status: number, message: string, code: string | null = null, param: string | null = null) =>
  Response.json({ error: { message, type: 'invalid_request_error', param, code } }, { status });

/** An ISO base media file's boxes: `ftyp` (brand isom/mp42), then `mdat` up to `size` bytes. */
export function fakeMp4(size = 4096): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(Math.max(size, 32));
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 24);
  bytes.set(new TextEncoder().encode('ftypisom\0\0\x02\0isommp42'), 4);
  view.setUint32(24, bytes.length - 24);
  bytes.set(new TextEncoder().encode('mdat'), 28);
  for (let i = 32; i < bytes.length; i++) bytes[i] = i & 0xff;
  return bytes;
}

export function startFakeVideos(): FakeVideos {
  const jobs = new Map<string, Job>();
  let n = 0;
  const fake: FakeVideos = {
    url: '',
    requests: [],
    log: [],
    plan: () => ({ outcome: 'completed' }),
    failPolls: 0,
    endAll: () => jobs.forEach((job) => (job.plan = { outcome: 'completed', pollsBeforeEnd: 0 })),
    stop: () => server.stop(true),
  };

  const objectOf = (job: Job) => {
    const ended = job.plan.outcome !== 'stuck' && job.polls > (job.plan.outcome === 'refused' ? 0 : (job.plan.pollsBeforeEnd ?? 1));
    const status = !ended ? (job.polls === 0 ? 'queued' : 'in_progress') : job.plan.outcome === 'failed' ? 'failed' : 'completed';
    return {
      id: job.id,
      object: 'video',
      created_at: job.createdAt,
      status,
      progress: status === 'completed' ? 100 : status === 'failed' ? 0 : Math.min(99, job.polls * 25),
      model: job.body.model ?? 'sora-2',
      prompt: job.body.prompt ?? null,
      seconds: job.body.seconds ?? '4',
      size: job.body.size ?? '720x1280',
      remixed_from_video_id: null,
      completed_at: status === 'completed' ? job.createdAt + 60 : null,
      expires_at: status === 'completed' ? job.createdAt + 86_400 : null,
      error: status === 'failed' && job.plan.outcome === 'failed' ? { code: job.plan.code ?? 'video_generation_failed', message: job.plan.message ?? 'Video generation failed.' } : null,
    };
  };

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      fake.log.push(`${req.method} ${url.pathname}`);
      if (req.method === 'POST' && url.pathname === '/v1/videos') {
        const contentType = req.headers.get('content-type') ?? '';
        const fields: Record<string, unknown> = contentType.startsWith('multipart/form-data')
          ? Object.fromEntries([...(await req.formData()).entries()].map(([k, v]) => [k, typeof v === 'string' ? v : '(file)']))
          : ((await req.json().catch(() => ({}))) as Record<string, unknown>);
        const str = (k: string) => (typeof fields[k] === 'string' ? (fields[k] as string) : undefined);
        const body: VideoCreateRequest = {
          contentType: contentType.split(';')[0]!,
          prompt: str('prompt'),
          model: str('model'),
          seconds: str('seconds'),
          size: str('size'),
          authorization: req.headers.get('authorization'),
        };
        fake.requests.push(body);
        if (!body.prompt) return openAiError(400, "Missing required parameter: 'prompt'.", 'missing_required_parameter', 'prompt');
        const plan = fake.plan(body);
        if (plan.outcome === 'refused') return openAiError(plan.status, plan.message ?? 'Refused.', plan.code ?? null);
        const job: Job = { id: `video_${(++n).toString(16).padStart(24, '0')}`, plan, polls: 0, body, createdAt: Math.floor(Date.now() / 1000) };
        jobs.set(job.id, job);
        return Response.json(objectOf(job));
      }
      const m = url.pathname.match(/^\/v1\/videos\/([^/]+)(\/content)?$/);
      const job = m ? jobs.get(m[1]!) : undefined;
      if (req.method === 'GET' && m && !job) return openAiError(404, `Video with id '${m[1]}' not found.`, 'not_found');
      if (req.method === 'GET' && job && !m![2]) {
        if (fake.failPolls > 0) {
          fake.failPolls--;
          return Response.json({ error: { message: 'The server is restarting.', type: 'server_error', param: null, code: null } }, { status: 503 });
        }
        job.polls++;
        return Response.json(objectOf(job));
      }
      if (req.method === 'GET' && job && m![2]) {
        if (objectOf(job).status !== 'completed') return openAiError(404, 'Video is not ready yet.', 'video_not_ready');
        const bytes = job.plan.outcome === 'completed' ? (job.plan.bytes ?? fakeMp4()) : fakeMp4();
        return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': 'video/mp4' } });
      }
      return openAiError(404, 'Not found.');
    },
  });
  fake.url = `http://127.0.0.1:${server.port}/v1`;
  return fake;
}
