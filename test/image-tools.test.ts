/**
 * Image generation and editing as tools of chat and research turns, end to end through HTTP with
 * the fake OpenAI chat/Responses server scripting the model's calls and the fake images server
 * (test/fakes/openai-images.ts) answering them: the stream's events and their fields, the image
 * kept as the user's file and served at its URL, edits of an upload, and every way a call fails
 * (someone else's file, the server down or refusing, garbage, a slow server) without ending the turn.
 */
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transformer } from '@napi-rs/image';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf, type Frame } from './sse';
import { functionCallEvents, startFakeOpenAI, textEvents, toolCallsThenAnswer } from './fakes/openai';
import { solidPng, startFakeImages, type ImagesAnswer } from './fakes/openai-images';
import type { Config } from '../src/config';
import type { AiEvent } from '../src/ai/ai.types';
import { imageTools } from '../src/files/image.tools';

setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
const images = startFakeImages();
const dirs: string[] = [];
afterAll(() => {
  openai.stop();
  images.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const IMAGE_TOOLS = ['generate_image', 'edit_image'];
const KEY = 'sk-images-secret';

beforeEach(() => {
  openai.requests.length = 0;
  openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }] });
  openai.responsesScript = () => textEvents('Fine.');
  images.requests.length = 0;
  images.downloads.length = 0;
  images.answer = () => ({});
  images.delayMs = 0;
});

const chatConfig = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat',
  aiBaseUrl: openai.url,
  aiModel: 'small',
  researchModel: 'small',
  rateLimitAi: { capacity: 1000, perMs: 1000 },
  imagesBaseUrl: images.url,
  imagesApiKey: KEY,
  ...extra,
});

async function setup(config: Partial<Config> = chatConfig()) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-image-tools-'));
  dirs.push(dataDir);
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { dataDir, ...config } });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

const chat = async (ctx: TestContext, as: TestUser, message = 'Draw me a lighthouse.') => readFrames(await ctx.call('chat/stream', { message }, as));
const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name ?? t.name ?? t.type);
const toolOutputs = () => chatRequests().at(-1)!.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content as string);
const imageFrames = (frames: Frame[]) => frames.filter((f) => /^(image_generation|edit_image)\./.test(f.data.type)).map((f) => f.data);
const filesOf = async (ctx: TestContext, as: TestUser) => (await ctx.json('files/listFiles', {}, as)).body.files as any[];

/** A Chat Completions turn that calls the given tools, then one that answers. */
function callsThenAnswers(calls: { id: string; name: string; args: unknown }[], answer = 'Here it is.') {
  openai.chatScript = toolCallsThenAnswer(calls, answer);
}

function upload(ctx: TestContext, as: TestUser, bytes: Uint8Array | string, filename: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), filename);
  return ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as.key }, body: form }));
}

/** A PNG of random pixels: it does not compress. */
const noisyPng = (w: number, h: number) => Transformer.fromRgbaPixels(crypto.getRandomValues(new Uint8Array(w * h * 4)), w, h).pngSync();

const download = async (ctx: TestContext, path: string, as: TestUser) => ctx.app.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': as.key } }));

describe('generate_image', () => {
  test('openai-chat: the model calls it, the stream shows in_progress → completed, the image is the user\'s file served at its URL', async () => {
    const { ctx, ann, bob } = await setup();
    callsThenAnswers([{ id: 'img1', name: 'generate_image', args: { prompt: '  A lighthouse at dusk, watercolour. ' } }]);
    const frames = await chat(ctx, ann);
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'image_generation.in_progress', 'image_generation.completed', 'content_part.added', 'text.delta', 'done']);

    const [file] = await filesOf(ctx, ann);
    expect(file).toMatchObject({ kind: 'image', mimeType: 'image/png', source: 'generated', width: 1024, height: 1024, filename: expect.stringMatching(/^image-[0-9a-f]{16}\.png$/) });
    expect(imageFrames(frames)).toEqual([
      { type: 'image_generation.in_progress', itemId: 'img1', outputFormat: 'png', size: '1024x1024', prompt: 'A lighthouse at dusk, watercolour.' },
      {
        type: 'image_generation.completed',
        itemId: 'img1',
        images: [{ type: 'url', data: `/api/files/${file.id}/content`, fileId: file.id, mimeType: 'image/png', width: 1024, height: 1024 }],
        model: 'gpt-image-1',
      },
    ]);

    // What the images server was asked: one image, the configured model and size, the key; no
    // response_format for a GPT image model (it refuses the parameter).
    expect(images.requests).toEqual([
      { path: '/v1/images/generations', model: 'gpt-image-1', prompt: 'A lighthouse at dusk, watercolour.', n: 1, size: '1024x1024', responseFormat: undefined, authorization: `Bearer ${KEY}` },
    ]);
    expect(toolNames(chatRequests()[0])).toEqual(expect.arrayContaining(IMAGE_TOOLS));
    expect(toolOutputs()[0]).toContain(`file ${file.id}`);

    const content = await download(ctx, file.contentUrl, ann);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('image/png');
    const meta = await new Transformer(new Uint8Array(await content.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([1024, 1024]);
    expect((await download(ctx, file.thumbnailUrl, ann)).status).toBe(200);
    // Ann's, not Bob's.
    expect((await download(ctx, file.contentUrl, bob)).status).toBe(404);
    expect(await filesOf(ctx, bob)).toEqual([]);

    // A reloaded conversation keeps the image on the answer.
    const conversationId = frames[0]!.data.conversationId;
    const items = (await ctx.json('chat/getConversation', { conversationId }, ann)).body;
    expect(JSON.stringify(items)).toContain(file.id);
  });

  test('openai-responses research: a function call makes the image; the follow-up gets the output', async () => {
    const { ctx, ann } = await setup({ ...chatConfig(), aiProvider: 'openai-responses', aiApiKey: 'sk-test', imagesModel: 'sd-turbo', imagesSize: '512x512' });
    let turn = 0;
    openai.responsesScript = () => (turn++ === 0 ? functionCallEvents('call_7', 'generate_image', { prompt: 'A diagram of a heart' }) : textEvents('Report.', 1));
    const frames = await readFrames(await ctx.call('chat/streamDeepResearch', { message: 'Research hearts and draw one' }, ann));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'image_generation.in_progress', 'image_generation.completed', 'content_part.added', 'text.delta', 'done']);
    const [file] = await filesOf(ctx, ann);
    expect(file).toMatchObject({ source: 'generated', width: 512, height: 512 });
    // A size the interface's enum does not name is left out of the event.
    expect(imageFrames(frames)[0]).toEqual({ type: 'image_generation.in_progress', itemId: 'call_7', outputFormat: 'png', prompt: 'A diagram of a heart' });
    expect(imageFrames(frames)[1]).toMatchObject({ itemId: 'call_7', model: 'sd-turbo', images: [{ type: 'url', fileId: file.id }] });
    // Other servers are asked for base64.
    expect(images.requests[0]).toMatchObject({ model: 'sd-turbo', size: '512x512', responseFormat: 'b64_json' });
    const [first, followUp] = openai.requests.filter((r) => r.path === 'POST /v1/responses').map((r) => r.body);
    expect(toolNames(first)).toEqual(expect.arrayContaining(IMAGE_TOOLS));
    expect(followUp.input).toEqual([{ type: 'function_call_output', call_id: 'call_7', output: expect.stringContaining(`file ${file.id}`) }]);
  });

  test('a server answering with a URL on its own host: downloaded; on another private host: refused', async () => {
    const { ctx, ann } = await setup(chatConfig({ imagesModel: 'dall-e-3' }));
    images.answer = () => ({ as: 'url' });
    callsThenAnswers([{ id: 'u1', name: 'generate_image', args: { prompt: 'A fox' } }]);
    const frames = await chat(ctx, ann);
    expect(typesOf(frames)).toContain('image_generation.completed');
    expect(images.downloads).toEqual(['/generated/1.png']);
    expect(await filesOf(ctx, ann)).toHaveLength(1);

    // An address elsewhere on the network (loopback, but not the images server's host).
    images.answer = () => ({ as: 'url', url: `http://127.0.0.2:${new URL(images.origin).port}/generated/1.png` });
    callsThenAnswers([{ id: 'u2', name: 'generate_image', args: { prompt: 'A fox' } }]);
    const second = await chat(ctx, ann);
    expect(imageFrames(second)[1]).toEqual({ type: 'image_generation.error', itemId: 'u2', error: expect.stringContaining('private network') });
    expect(JSON.stringify(second)).not.toContain('127.0.0.2');
    expect(await filesOf(ctx, ann)).toHaveLength(1);
  });

  test('a server refusing response_format is asked again without it, and never again with it', async () => {
    const { ctx, ann } = await setup(chatConfig({ imagesModel: 'proxy-image' }));
    images.answer = (r): ImagesAnswer => (r.responseFormat ? { fail: 400, message: "Unknown parameter: 'response_format'." } : {});
    callsThenAnswers([{ id: 'r1', name: 'generate_image', args: { prompt: 'A boat' } }]);
    expect(typesOf(await chat(ctx, ann))).toContain('image_generation.completed');
    callsThenAnswers([{ id: 'r2', name: 'generate_image', args: { prompt: 'A second boat' } }]);
    expect(typesOf(await chat(ctx, ann))).toContain('image_generation.completed');
    expect(images.requests.map((r) => r.responseFormat)).toEqual(['b64_json', undefined, undefined]);
  });

  test('the same call run again (a restart) finds its image instead of making a second', async () => {
    const { ctx, ann } = await setup();
    const [generate] = imageTools(ctx.deps, { userId: ann.user.id, responseId: 'resp-1', images: await ctx.deps.connections.images() });
    const events: AiEvent[] = [];
    const first = await generate!.run({ prompt: 'A kite' }, (e) => events.push(e), 'call_1', 'up_1:call_1');
    const again = await generate!.run({ prompt: 'A kite' }, (e) => events.push(e), 'call_1', 'up_1:call_1');
    expect(again).toBe(first);
    expect(images.requests).toHaveLength(1);
    expect(await filesOf(ctx, ann)).toHaveLength(1);
    expect(events.map((e) => e.type)).toEqual(['image_generation.in_progress', 'image_generation.completed', 'image_generation.in_progress', 'image_generation.completed']);
    // Another call is another image.
    await generate!.run({ prompt: 'A kite' }, () => {}, 'call_2', 'up_1:call_2');
    expect(await filesOf(ctx, ann)).toHaveLength(2);
  });
});

describe('edit_image', () => {
  test('an uploaded image is sent as the image part with the prompt; the result is a new file, the original unchanged', async () => {
    const { ctx, ann } = await setup(chatConfig({ imagesSize: '64x48' }));
    const uploaded = (await (await upload(ctx, ann, solidPng(80, 60, [10, 200, 10, 255]), 'garden.png')).json()) as any;
    const stored = new Uint8Array(await (await download(ctx, uploaded.contentUrl, ann)).arrayBuffer());
    callsThenAnswers([{ id: 'e1', name: 'edit_image', args: { fileId: uploaded.id, prompt: 'Add a red balloon' } }]);
    const frames = await chat(ctx, ann, 'Add a red balloon to my garden photo.');
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'edit_image.in_progress', 'edit_image.completed', 'content_part.added', 'text.delta', 'done']);

    const edited = (await filesOf(ctx, ann)).find((f) => f.id !== uploaded.id)!;
    expect(edited).toMatchObject({ source: 'generated', kind: 'image', mimeType: 'image/png', width: 64, height: 48 });
    expect(imageFrames(frames)).toEqual([
      { type: 'edit_image.in_progress', itemId: 'e1', prompt: 'Add a red balloon', fileId: uploaded.id },
      {
        type: 'edit_image.completed',
        itemId: 'e1',
        images: [{ type: 'url', data: `/api/files/${edited.id}/content`, fileId: edited.id, mimeType: 'image/png', width: 64, height: 48 }],
        model: 'gpt-image-1',
      },
    ]);
    const [req] = images.requests;
    expect(req).toMatchObject({ path: '/v1/images/edits', model: 'gpt-image-1', prompt: 'Add a red balloon', n: 1, size: '64x48', responseFormat: undefined, authorization: `Bearer ${KEY}` });
    // The part is the user's file, byte for byte, under a name and type the API takes.
    expect(req!.image).toEqual({ bytes: stored, filename: 'image.png', type: 'image/png' });
    expect(toolOutputs()[0]).toContain(`a new file ${edited.id}`);
    expect((await download(ctx, edited.contentUrl, ann)).status).toBe(200);
    const original = new Uint8Array(await (await download(ctx, uploaded.contentUrl, ann)).arrayBuffer());
    expect(original).toEqual(stored);
  });

  test("someone else's file, an unknown id, a document, an empty prompt: refused, nothing sent or stored, the turn goes on", async () => {
    const { ctx, ann, bob } = await setup();
    const bobs = (await (await upload(ctx, bob, solidPng(20, 20), 'bob.png')).json()) as any;
    const doc = (await (await upload(ctx, ann, 'Some notes, plain text.', 'notes.txt')).json()) as any;
    callsThenAnswers([
      { id: 'x1', name: 'edit_image', args: { fileId: bobs.id, prompt: 'Make it blue' } },
      { id: 'x2', name: 'edit_image', args: { fileId: 'no-such-file', prompt: 'Make it blue' } },
      { id: 'x3', name: 'edit_image', args: { fileId: doc.id, prompt: 'Make it blue' } },
      { id: 'x4', name: 'edit_image', args: { fileId: doc.id, prompt: '  ' } },
    ]);
    const frames = await chat(ctx, ann, 'Edit that.');
    expect(typesOf(frames).slice(-3)).toEqual(['content_part.added', 'text.delta', 'done']);
    expect(imageFrames(frames)).toEqual([
      { type: 'edit_image.in_progress', itemId: 'x1', prompt: 'Make it blue', fileId: bobs.id },
      { type: 'edit_image.error', itemId: 'x1', error: `No image with the id "${bobs.id}" is available to you.` },
      { type: 'edit_image.in_progress', itemId: 'x2', prompt: 'Make it blue', fileId: 'no-such-file' },
      { type: 'edit_image.error', itemId: 'x2', error: 'No image with the id "no-such-file" is available to you.' },
      { type: 'edit_image.in_progress', itemId: 'x3', prompt: 'Make it blue', fileId: doc.id },
      { type: 'edit_image.error', itemId: 'x3', error: `File ${doc.id} is a document, not an image.` },
    ]);
    const outputs = toolOutputs();
    expect(outputs[0]).toBe(`The image was not edited. No image with the id "${bobs.id}" is available to you.`);
    expect(outputs[3]).toContain('the prompt is empty');
    expect(images.requests).toEqual([]);
    expect((await filesOf(ctx, ann)).map((f) => f.id)).toEqual([doc.id]);
    expect((await filesOf(ctx, bob)).map((f) => f.id)).toEqual([bobs.id]);
  });
});

describe('failures', () => {
  test('upstream 500: an error event and result, the server\'s words, address and key nowhere; the turn completes', async () => {
    const { ctx, ann } = await setup();
    images.answer = () => ({ fail: 500, message: `internal failure at ${images.origin} with ${KEY}` });
    callsThenAnswers([{ id: 'f1', name: 'generate_image', args: { prompt: 'A cat' } }], 'Sorry, no image.');
    const frames = await chat(ctx, ann);
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'image_generation.in_progress', 'image_generation.error', 'content_part.added', 'text.delta', 'done']);
    expect(imageFrames(frames)[1]).toEqual({ type: 'image_generation.error', itemId: 'f1', error: 'The image server failed with a server error (HTTP 500).' });
    expect(toolOutputs()).toEqual(['No image was made. The image server failed with a server error (HTTP 500).']);
    for (const text of [JSON.stringify(frames), JSON.stringify(chatRequests())]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(images.origin);
      expect(text).not.toContain('internal failure');
    }
    expect(await filesOf(ctx, ann)).toEqual([]);
  });

  test('no server, a content-policy refusal, garbage, a slow server, an answer too large, a full quota: each an error result', async () => {
    const cases: { name: string; config?: Partial<Config>; answer?: typeof images.answer; delayMs?: number; error: string | RegExp }[] = [
      { name: 'unreachable', config: { imagesBaseUrl: 'http://127.0.0.1:9/v1' }, error: 'The image server could not be reached.' },
      { name: 'policy', answer: () => ({ fail: 400, code: 'moderation_blocked', message: 'Your request was rejected by the safety system.' }), error: 'The image server refused this prompt under its content policy (HTTP 400).' },
      { name: 'garbage', answer: () => ({ bytes: new TextEncoder().encode('<html>not an image</html>') }), error: 'The image server answered something that is not an image.' },
      { name: 'no image', answer: () => ({ json: { created: 1, data: [] } }), error: 'The image server answered without an image.' },
      { name: 'slow', config: { imagesTimeoutS: 1 }, delayMs: 1500, error: 'The image server did not answer within 1 seconds (PARLEY_IMAGES_TIMEOUT_S).' },
      // Noise does not compress: well past the base64 of 1,000 bytes and the room for the JSON around it.
      { name: 'too large', config: { filesMaxBytes: 1000 }, answer: () => ({ png: noisyPng(200, 200) }), error: /more than one file may hold/ },
      { name: 'quota', config: { filesMaxPerUser: 1 }, error: /PARLEY_FILES_MAX_PER_USER/ },
    ];
    for (const c of cases) {
      const { ctx, ann } = await setup(chatConfig({ imagesSize: '32x32', ...c.config }));
      if (c.name === 'quota') await upload(ctx, ann, solidPng(8, 8), 'one.png');
      images.answer = c.answer ?? (() => ({}));
      images.delayMs = c.delayMs ?? 0;
      callsThenAnswers([{ id: 'c1', name: 'generate_image', args: { prompt: 'Anything' } }], 'Sorry.');
      const frames = await chat(ctx, ann);
      expect({ name: c.name, types: typesOf(frames).slice(-4) }).toEqual({ name: c.name, types: ['image_generation.error', 'content_part.added', 'text.delta', 'done'] });
      const error = imageFrames(frames)[1].error as string;
      if (typeof c.error === 'string') expect({ name: c.name, error }).toEqual({ name: c.name, error: c.error });
      else expect(error).toMatch(c.error);
      expect(toolOutputs()[0]).toBe(`No image was made. ${error}`);
      expect((await filesOf(ctx, ann)).filter((f) => f.source === 'generated')).toEqual([]);
    }
  });

  test('PARLEY_IMAGES_BASE_URL empty: the tools are not offered, and a call arriving anyway does nothing', async () => {
    const { ctx, ann } = await setup(chatConfig({ imagesBaseUrl: undefined }));
    callsThenAnswers([{ id: 'n1', name: 'generate_image', args: { prompt: 'A cat' } }]);
    const frames = await chat(ctx, ann);
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'content_part.added', 'text.delta', 'done']);
    expect(toolNames(chatRequests()[0]).filter((n) => IMAGE_TOOLS.includes(n))).toEqual([]);
    expect(toolNames(chatRequests()[0])).toContain('generate_canvas');
    expect(toolOutputs()).toEqual(['Unknown tool generate_image.']);
    expect(images.requests).toEqual([]);
  });
});
