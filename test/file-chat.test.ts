/**
 * Files in chat and research turns, through HTTP with the fake OpenAI server: files sent with a
 * message (documents named to the model, images given as images), the read_file and
 * search_files tools and their events, and the refusals.
 */
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transformer } from '@napi-rs/image';
import { sql } from 'drizzle-orm';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf } from './sse';
import { functionCallEvents, startFakeOpenAI, textEvents, toolCallsThenAnswer } from './fakes/openai';
import type { Config } from '../src/config';

setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
const dirs: string[] = [];
afterAll(() => {
  openai.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

beforeEach(() => {
  openai.requests.length = 0;
  openai.eventDelayMs = 0;
  openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }] });
  openai.responsesScript = () => textEvents('Fine.');
});

const chatConfig: Partial<Config> = { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small', rateLimitAi: { capacity: 1000, perMs: 1000 } };
const responsesConfig: Partial<Config> = { aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test', rateLimitAi: { capacity: 1000, perMs: 1000 } };

async function setup(config: Partial<Config> = chatConfig) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-file-chat-'));
  dirs.push(dataDir);
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { dataDir, ...config } });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

async function upload(ctx: TestContext, as: TestUser, bytes: Uint8Array | string, filename: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), filename);
  const res = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as.key }, body: form }));
  expect(res.status).toBe(200);
  return (await res.json()) as any;
}

async function pdfOf(...pages: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) pdf.addPage().drawText(text, { x: 50, y: 700, size: 12, font });
  return pdf.save();
}

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name ?? t.name ?? t.type);

/** A Chat Completions turn that calls one tool, then one that answers. */
function callsThenAnswers(name: string, args: unknown, answer = 'Done.') {
  openai.chatScript = toolCallsThenAnswer([{ id: 'call_1', name, args }], answer);
}

describe('files in chat', () => {
  test('a document sent with a message: named to the model, read with read_file (events in order), attached to the conversation', async () => {
    const { ctx, ann } = await setup();
    const report = await upload(ctx, ann, await pdfOf('Harvest report: the orchard gave 412 crates of quince.'), 'harvest.pdf');
    await ctx.deps.fileText.idle();
    callsThenAnswers('read_file', { fileId: report.id }, 'The orchard gave 412 crates.');
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'How many crates?', files: [report.id] }, ann));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'read_file.in_progress', 'read_file.completed', 'content_part.added', 'text.delta', 'done']);
    expect(frames[2]!.data).toEqual({ type: 'read_file.in_progress', itemId: 'call_1', fileId: report.id, filename: 'harvest.pdf' });
    expect(frames[3]!.data).toMatchObject({ type: 'read_file.completed', success: true });
    expect(frames[3]!.data.content).toContain('412 crates of quince');

    const [first, followUp] = chatRequests();
    const userMessage = first.messages.find((m: any) => m.role === 'user');
    expect(JSON.stringify(userMessage.content)).toContain(`Attached document: harvest.pdf (file id ${report.id}`);
    expect(toolNames(first)).toEqual(expect.arrayContaining(['read_file', 'search_files']));
    const toolMessage = followUp.messages.find((m: any) => m.role === 'tool');
    expect(toolMessage.content).toContain('412 crates of quince');
    expect(toolMessage.content).toContain('[End of the document.]');
    const conversationId = frames[0]!.data.conversationId;
    expect(await ctx.count('file_attachments')).toBe(1);
    expect((await ctx.query<{ conversation_id: string }>(sqlOf(report.id)))[0]!.conversation_id).toBe(conversationId);
  });

  test('an image sent by id reaches the model as the image itself (its stored bytes, no URL of Parley)', async () => {
    const { ctx, ann } = await setup();
    const png = Transformer.fromRgbaPixels(new Uint8Array(8 * 8 * 4).fill(255), 8, 8).pngSync();
    const image = await upload(ctx, ann, png, 'dot.png');
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'What is this?', files: [image.id] }, ann));
    expect(frames.at(-1)!.data.type).toBe('done');
    const userMessage = chatRequests()[0].messages.find((m: any) => m.role === 'user');
    const imagePart = userMessage.content.find((p: any) => p.type === 'image_url');
    expect(imagePart.image_url.url).toStartWith('data:image/png;base64,');
    // An image is no document to read: no file tools for a user without documents.
    expect(toolNames(chatRequests()[0])).not.toContain('read_file');
  });

  test("refusals: someone else's file (or an unknown id) is a 400 naming it before any stream; read_file on an id the model made up reads nothing", async () => {
    const { ctx, ann, bob } = await setup();
    const theirs = await upload(ctx, bob, 'private notes of Bob', 'bob.txt');
    const mine = await upload(ctx, ann, 'my notes', 'ann.txt');
    const refused = await ctx.call('chat/stream', { message: 'hi', files: [mine.id, theirs.id, 'nope'] }, ann);
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as any;
    expect(body.data.issues.map((i: any) => i.path)).toEqual([['files', 1], ['files', 2]]);
    expect(await ctx.count('responses')).toBe(0);

    await ctx.deps.fileText.idle();
    callsThenAnswers('read_file', { fileId: theirs.id });
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'read it' }, ann));
    expect(frames.find((f) => f.data.type === 'read_file.completed')!.data).toEqual({ type: 'read_file.completed', success: false, error: `No file with the id ${theirs.id} is available.` });
    expect(JSON.stringify(chatRequests().at(-1))).not.toContain('private notes of Bob');
  });

  test('search_files finds passages in the user\'s documents, not in anyone else\'s', async () => {
    const { ctx, ann, bob } = await setup();
    await upload(ctx, ann, 'The lighthouse keeper logs storms in a green ledger.', 'log.txt');
    await upload(ctx, bob, 'Bob also keeps a lighthouse ledger.', 'bob.txt');
    await ctx.deps.fileText.idle();
    callsThenAnswers('search_files', { query: 'lighthouse ledger' });
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'where are storms logged?' }, ann));
    const completed = frames.find((f) => f.data.type === 'file_search.completed')!.data;
    expect(completed.results.map((r: any) => r.filename)).toEqual(['log.txt']);
    const toolMessage = chatRequests().at(-1).messages.find((m: any) => m.role === 'tool');
    expect(toolMessage.content).toContain('green ledger');
    expect(toolMessage.content).not.toContain('Bob');
  });
});

describe('files in research', () => {
  test('deep research on the Responses API reads an attached document through read_file', async () => {
    const { ctx, ann } = await setup(responsesConfig);
    const doc = await upload(ctx, ann, '# Survey\n\nSeventy percent of owls prefer pine forests.', 'survey.md');
    await ctx.deps.fileText.idle();
    let turn = 0;
    openai.responsesScript = () => (turn++ === 0 ? functionCallEvents('call_9', 'read_file', { fileId: doc.id }) : textEvents('Owls like pines.', 1));
    const frames = await readFrames(await ctx.call('chat/streamDeepResearch', { message: 'What do owls prefer?', files: [doc.id] }, ann));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'read_file.in_progress', 'read_file.completed', 'content_part.added', 'text.delta', 'done']);
    const [, followUp] = openai.requests.filter((r) => r.path === 'POST /v1/responses').map((r) => r.body);
    expect(followUp.input[0]).toMatchObject({ type: 'function_call_output', call_id: 'call_9' });
    expect(followUp.input[0].output).toContain('Seventy percent of owls');
    // Asked to cite the documents it reads, and the answer keeps them as its sources.
    const first = openai.requests.find((r) => r.path === 'POST /v1/responses')!.body;
    expect(first.instructions).toContain('Cite the user\'s documents');
    const { items } = (await ctx.json('chat/getConversation', { conversationId: frames[0]!.data.conversationId }, ann)).body;
    const answer = items.find((i: any) => i.role === 'assistant');
    expect(answer.parts).toContainEqual({ type: 'read_file.in_progress', itemId: 'call_9', fileId: doc.id, filename: 'survey.md' });
  });
});

const sqlOf = (fileId: string) => sql`SELECT conversation_id FROM file_attachments WHERE file_id = ${fileId}`;
