/**
 * Video generation as the registry's `video` source, end to end through HTTP: an admin adds a
 * `video` connection, the fake model (test/fakes/openai.ts) calls `generate_video`, the fake
 * videos server (test/fakes/openai-videos.ts) takes the job, is polled and serves the MP4, and
 * the video becomes the user's file. A failed job, a refused prompt, a stuck job, a video too
 * large, the same call run again after a restart, and the admin's per-tier switch.
 */
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, SseReader, typesOf, type Frame } from './sse';
import { functionCallEvents, startFakeOpenAI, textEvents, toolCallsThenAnswer } from './fakes/openai';
import { fakeMp4, startFakeVideos } from './fakes/openai-videos';
import type { Config } from '../src/config';
import type { AiEvent } from '../src/ai/ai.types';
import { updateUser } from '../src/account/account.store';
import { videoTool } from '../src/video/video.tools';
import { resumeInterruptedResponses } from '../src/chat/respond';

setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
const videos = startFakeVideos();
afterAll(() => (openai.stop(), videos.stop()));

const KEY = 'sk-video-secret';

beforeEach(() => {
  openai.requests.length = 0;
  openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }] });
  videos.requests.length = 0;
  videos.log.length = 0;
  videos.plan = () => ({ outcome: 'completed' });
  videos.failPolls = 0;
});

const config = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat',
  aiBaseUrl: openai.url,
  aiModel: 'small',
  rateLimitAi: { capacity: 1000, perMs: 1000 },
  videoPollMs: 50,
  ...extra,
});

async function setup(opts: { connection?: boolean; options?: Record<string, unknown>; config?: Partial<Config>; durable?: boolean } = {}) {
  const ctx = await createTestContext({ durable: opts.durable, users: [{ email: 'admin@example.org' }, { email: 'ann@example.org' }, { email: 'bob@example.org' }], config: config(opts.config) });
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  await ctx.store.write((tx) => updateUser(tx, bob.user.id, { subscriptionTier: 'PRO' }, Date.now()));
  if (opts.connection !== false) {
    const added = await ctx.json('admin/addConnection', { name: 'sora', kind: 'video', api: 'openai', baseUrl: videos.url, credential: KEY, options: opts.options ?? {} }, admin);
    expect(added.status).toBe(200);
  }
  return { ctx, admin, ann, bob };
}

const chat = async (ctx: TestContext, as: TestUser, message = 'Make me a clip of waves.') => readFrames(await ctx.call('chat/stream', { message }, as));
const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name ?? t.name ?? t.type);
const toolOutputs = () => chatRequests().at(-1)!.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content as string);
const videoFrames = (frames: Frame[]) => frames.filter((f) => f.data.type.startsWith('generate_video.')).map((f) => f.data);
const filesOf = async (ctx: TestContext, as: TestUser) => (await ctx.json('files/listFiles', {}, as)).body.files as any[];
const calls = (args: Record<string, unknown>) => (openai.chatScript = toolCallsThenAnswer([{ id: 'vid1', name: 'generate_video', args }], 'Here is your clip.'));

describe('generate_video', () => {
  test('the model calls it: a job is created, polled and downloaded; the stream shows in_progress → completed; the video is the user\'s file', async () => {
    const { ctx, ann, bob } = await setup({ options: { model: 'sora-2-pro', seconds: 8 } });
    calls({ prompt: ' Waves on a beach at dawn ', negative_prompt: 'people', aspect_ratio: '9:16' });
    const frames = await chat(ctx, ann);
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'generate_video.in_progress', 'generate_video.completed', 'content_part.added', 'text.delta', 'done']);

    const [file] = await filesOf(ctx, ann);
    expect(file).toMatchObject({ kind: 'document', mimeType: 'video/mp4', source: 'generated', size: 4096, filename: expect.stringMatching(/^video-[0-9a-f]{16}\.mp4$/) });
    expect(videoFrames(frames)).toEqual([
      { type: 'generate_video.in_progress', itemId: 'vid1', prompt: 'Waves on a beach at dawn', negative_prompt: 'people', aspect_ratio: '9:16' },
      { type: 'generate_video.completed', itemId: 'vid1', video: { url: `/api/files/${file.id}/content`, fileId: file.id, mimeType: 'video/mp4' }, model: 'sora-2-pro' },
    ]);

    // OpenAI's SDK sends the create as multipart: the model, seconds and size asked for, the key;
    // the negative prompt folded into the prompt (the API has no field for it).
    expect(videos.requests).toEqual([
      { contentType: 'multipart/form-data', prompt: 'Waves on a beach at dawn (avoid: people)', model: 'sora-2-pro', seconds: '8', size: '720x1280', authorization: `Bearer ${KEY}` },
    ]);
    expect(videos.log.filter((l) => l.startsWith('GET')).at(-1)).toMatch(/^GET \/v1\/videos\/video_\w+\/content$/);
    expect(videos.log.filter((l) => /^GET \/v1\/videos\/video_\w+$/.test(l)).length).toBeGreaterThanOrEqual(2);
    expect(toolNames(chatRequests()[0])).toContain('generate_video');
    expect(toolOutputs()[0]).toContain(`file ${file.id}`);

    // Served inline as a video (a <video> element plays it), to its owner only.
    const content = await ctx.app.handle(new Request(`http://localhost${file.contentUrl}`, { headers: { 'x-api-key': ann.key } }));
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(content.headers.get('content-disposition')).toStartWith('inline;');
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(fakeMp4());
    expect((await ctx.app.handle(new Request(`http://localhost${file.contentUrl}`, { headers: { 'x-api-key': bob.key } }))).status).toBe(404);

    // A reloaded conversation keeps the video on the answer; the call is metered as seconds of video.
    const conversationId = frames[0]!.data.conversationId;
    const items = JSON.stringify((await ctx.json('chat/getConversation', { conversationId }, ann)).body);
    expect(items).toContain('"generate_video.completed"');
    expect(items).toContain(file.id);
    const usage = await ctx.json('usage/getUsage', { by: 'kind' }, ann);
    expect(usage.body.groups).toContainEqual(expect.objectContaining({ key: 'video', units: 8, calls: 1 }));
  });

  test('a failed job: generate_video.error in Parley\'s words, the model told, no file; a reload shows the error', async () => {
    const { ctx, ann } = await setup();
    videos.plan = () => ({ outcome: 'failed', pollsBeforeEnd: 2, code: 'video_generation_failed', message: 'internal render node 7 crashed at /srv/render' });
    calls({ prompt: 'A cat surfing' });
    const frames = await chat(ctx, ann);
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'generate_video.in_progress', 'generate_video.error', 'content_part.added', 'text.delta', 'done']);
    const error = 'The video server could not make this video (the job failed).';
    expect(videoFrames(frames)[1]).toEqual({ type: 'generate_video.error', itemId: 'vid1', error });
    expect(JSON.stringify(frames)).not.toContain('/srv/render');
    expect(toolOutputs()[0]).toBe(`No video was made. ${error}`);
    expect(await filesOf(ctx, ann)).toEqual([]);
    expect(videos.log.some((l) => l.endsWith('/content'))).toBe(false);
    const items = JSON.stringify((await ctx.json('chat/getConversation', { conversationId: frames[0]!.data.conversationId }, ann)).body);
    expect(items).toContain(error);

    // A content-policy failure says so.
    videos.plan = () => ({ outcome: 'failed', code: 'moderation_blocked' });
    calls({ prompt: 'A cat surfing' });
    expect(videoFrames(await chat(ctx, ann))[1]!.error).toBe('The video server refused this prompt under its content policy.');
  });

  test('a refused create, a stuck job, a video too large, a bad argument: each a clear error, the turn goes on', async () => {
    const { ctx, admin, ann } = await setup({ config: { videoMaxBytes: 10_000 } });
    videos.plan = () => ({ outcome: 'refused', status: 401, message: 'Incorrect API key provided: sk-vi****' });
    calls({ prompt: 'A storm' });
    let frames = await chat(ctx, ann);
    expect(videoFrames(frames)[1]).toEqual({ type: 'generate_video.error', itemId: 'vid1', error: "The video server refused Parley's API key (HTTP 401)." });
    expect(typesOf(frames).at(-1)).toBe('done');

    videos.plan = () => ({ outcome: 'completed', bytes: fakeMp4(20_000) });
    calls({ prompt: 'A storm' });
    frames = await chat(ctx, ann);
    expect(videoFrames(frames)[1]!.error).toBe('The video is larger than Parley keeps (10000 bytes, PARLEY_VIDEO_MAX_BYTES).');

    videos.plan = () => ({ outcome: 'completed', bytes: new TextEncoder().encode('<html>not a video</html>') });
    calls({ prompt: 'A storm' });
    frames = await chat(ctx, ann);
    expect(videoFrames(frames)[1]!.error).toBe('The video server answered something that is not a video.');
    expect(await filesOf(ctx, ann)).toEqual([]);

    const before = videos.requests.length;
    calls({ prompt: 'A storm', aspect_ratio: '4:3' });
    frames = await chat(ctx, ann);
    expect(videoFrames(frames)).toEqual([]);
    expect(toolOutputs()[0]).toBe('Nothing was made: aspect_ratio is one of 16:9, 1:1, 9:16.');
    expect(videos.requests.length).toBe(before);

    // The admin gives a job one second: a stuck one ends the call then (the option reaches the tool at once).
    expect((await ctx.json('admin/updateConnection', { id: 'sora', options: { timeoutS: 1 } }, admin)).status).toBe(200);
    videos.plan = () => ({ outcome: 'stuck' });
    calls({ prompt: 'A storm' });
    frames = await chat(ctx, ann);
    expect(videoFrames(frames)[1]!.error).toBe('The video was not ready within 1 seconds (PARLEY_VIDEO_TIMEOUT_S).');
  });

  test('a poll that fails is asked again: two in a row are survived, three end the call', async () => {
    const { ctx, ann } = await setup();
    let frames: Frame[];
    // Two polls failing in a row are asked again; three end the call.
    videos.plan = () => ({ outcome: 'completed' });
    videos.failPolls = 2;
    calls({ prompt: 'A storm' });
    frames = await chat(ctx, ann);
    expect(videoFrames(frames)[1]).toMatchObject({ type: 'generate_video.completed' });
    videos.failPolls = 3;
    calls({ prompt: 'A storm' });
    frames = await chat(ctx, ann);
    expect(videoFrames(frames)[1]!.error).toBe('The video server failed with a server error (HTTP 503).');
  });

  test('the same call run again (a restart mid-poll) polls the job it started instead of making a second video', async () => {
    const { ctx, ann } = await setup();
    // A turn for the job's response row.
    const frames = await chat(ctx, ann, 'Hello');
    const responseId = frames.find((f) => f.data.type === 'response.created')!.data.responseId as string;
    const svc = (await ctx.deps.connections.video())!;
    videos.plan = () => ({ outcome: 'completed', pollsBeforeEnd: 4 });

    // The first run is cut off while it polls (the server going down): the job stays recorded.
    const stop = new AbortController();
    const events: AiEvent[] = [];
    const first = videoTool(ctx.deps, svc, { userId: ann.user.id, responseId, signal: stop.signal }).run({ prompt: 'A kite' }, (e) => events.push(e), 'call_1', 'up_1:call_1');
    while (!videos.log.some((l) => /^GET \/v1\/videos\/video_\w+$/.test(l))) await Bun.sleep(10);
    stop.abort();
    await first;
    expect(await filesOf(ctx, ann)).toEqual([]);

    // Run again (what a resumed turn does): no second create, the same job polled to its end.
    const again = videoTool(ctx.deps, svc, { userId: ann.user.id, responseId });
    const out = await again.run({ prompt: 'A kite' }, (e) => events.push(e), 'call_1', 'up_1:call_1');
    expect(videos.requests).toHaveLength(1);
    const [file] = await filesOf(ctx, ann);
    expect(out).toContain(`file ${file.id}`);
    // And once more after it ended: the kept file, nothing asked of the server.
    const logged = videos.log.length;
    expect(await again.run({ prompt: 'A kite' }, (e) => events.push(e), 'call_1', 'up_1:call_1')).toBe(out);
    expect(videos.log.length).toBe(logged);
    expect(events.filter((e) => e.type === 'generate_video.completed')).toHaveLength(2);
    // Another call is another video.
    await again.run({ prompt: 'A kite' }, () => {}, 'call_2', 'up_1:call_2');
    expect(videos.requests).toHaveLength(2);
    expect(await filesOf(ctx, ann)).toHaveLength(2);
  });

  test('a real restart while the job runs (openai-responses resumes the turn): the resumed call polls the same job, one video made', async () => {
    const responses = config({ aiProvider: 'openai-responses', aiApiKey: 'sk-test' });
    const { ctx: before, ann } = await setup({ config: responses, durable: true });
    let turn = 0;
    openai.responsesScript = () => (turn++ === 0 ? functionCallEvents('call_v', 'generate_video', { prompt: 'A lighthouse in a storm' }) : textEvents('Here it is.', 1));
    videos.plan = () => ({ outcome: 'completed', pollsBeforeEnd: 1_000_000 });
    const reader = new SseReader(await before.call('chat/stream', { message: 'Film a lighthouse' }, ann));
    const head = await reader.until('response.created');
    // The job is polled: the process "dies" now.
    while (!videos.log.some((l) => /^GET \/v1\/videos\/video_\w+$/.test(l))) await Bun.sleep(10);
    await reader.close();
    await before.deps.tasks.shutdown();
    await before.close();
    expect(videos.requests).toHaveLength(1);

    // Started again: the resumed turn runs the call again.
    const after = await createTestContext({ config: responses, sameDatabaseAs: before });
    const polledBefore = videos.log.length;
    const jobs = new Set(videos.log.map((l) => l.match(/video_\w+/)?.[0]).filter(Boolean));
    expect(jobs.size).toBe(1);
    // The job finished on the server while Parley was down.
    videos.endAll();
    expect(await resumeInterruptedResponses(after.deps)).toEqual({ resumed: 1, failed: 0 });
    const rest = await readFrames(await after.call('chat/stream', { message: 'x' }, { 'x-api-key': ann.key, 'last-event-id': head.at(-1)!.id! }));
    expect(typesOf(rest)).toContain('generate_video.completed');
    expect(videos.requests).toHaveLength(1);
    expect(videos.log.slice(polledBefore).every((l) => l.startsWith('GET'))).toBe(true);
    const [file] = await filesOf(after, ann);
    expect(videoFrames(rest).at(-1)).toMatchObject({ type: 'generate_video.completed', itemId: 'call_v', video: { fileId: file.id } });
    await after.close();
  });

  test('offered only with an enabled video connection, and only to the tiers the admin switched it on for', async () => {
    const none = await setup({ connection: false });
    await chat(none.ctx, none.ann);
    expect(toolNames(chatRequests()[0])).not.toContain('generate_video');

    openai.requests.length = 0;
    const { ctx, admin, ann, bob } = await setup();
    const set = await ctx.json('admin/setToolSettings', { sources: [{ id: 'video', tiers: ['PRO'] }] }, admin);
    expect(set.status).toBe(200);
    expect(set.body.sources).toContainEqual(expect.objectContaining({ id: 'video', tiers: ['PRO'] }));
    await chat(ctx, ann);
    await chat(ctx, bob);
    const [annAsked, bobAsked] = chatRequests();
    expect(toolNames(annAsked)).not.toContain('generate_video');
    expect(toolNames(bobAsked)).toContain('generate_video');

    await ctx.json('admin/setToolSettings', { sources: [{ id: 'video', enabled: false }] }, admin);
    openai.requests.length = 0;
    await chat(ctx, bob);
    expect(toolNames(chatRequests()[0])).not.toContain('generate_video');
  });

  test('a video connection takes model, seconds and timeoutS only', async () => {
    const { ctx, admin } = await setup({ connection: false });
    const refused = await ctx.json('admin/addConnection', { name: 'vid', kind: 'video', baseUrl: videos.url, options: { size: '1280x720' } }, admin);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('A video connection has no option size (it takes: model, seconds, timeoutS).');
    const wrongApi = await ctx.json('admin/addConnection', { name: 'vid', kind: 'video', api: 'openai-chat', baseUrl: videos.url }, admin);
    expect(wrongApi.body.message).toBe('A video connection speaks openai, not openai-chat.');
  });
});
