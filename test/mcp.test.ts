/**
 * MCP servers' tools in chat, end to end through HTTP against real MCP servers from npm
 * (server-everything over stdio, streamable HTTP and the older HTTP+SSE; server-filesystem;
 * server-memory) and the fake OpenAI server scripting the model's calls: the namespaced tools the
 * model is offered, the `mcp_call.*` events, text, image and resource results, progress on a long
 * call, a server killed mid-call, a 10 MB answer, and the admin's and users' operations.
 */
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf, type Frame } from './sse';
import { startFakeOpenAI, toolCallsThenAnswer } from './fakes/openai';
import type { Config } from '../src/config';
import { addMcpServer } from '../src/mcp/mcp-server.service';
import { everythingStdio, filesystemStdio, memoryStdio, startEverythingHttp, type RunningServer } from './support/mcp-servers';
import { toolNameOf } from '../src/mcp/mcp.tools';
import { startModernMcp } from './fakes/mcp-modern';
import { updateUser } from '../src/account/account.store';

setDefaultTimeout(60_000);

const openai = startFakeOpenAI();
const running: Pick<RunningServer, 'stop'>[] = [];
const contexts: TestContext[] = [];
afterAll(async () => {
  openai.stop();
  for (const s of running) s.stop();
  for (const c of contexts) await c.deps.mcp.close();
});

beforeEach(() => {
  openai.requests.length = 0;
  openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }] });
});

const config = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat',
  aiBaseUrl: openai.url,
  aiModel: 'small',
  rateLimitAi: { capacity: 1000, perMs: 1000 },
  rateLimitWrite: { capacity: 1000, perMs: 1000 },
  ...extra,
});

async function setup(extra: Partial<Config> = {}): Promise<{ ctx: TestContext; admin: TestUser; ann: TestUser }> {
  const ctx = await createTestContext({ users: [{ email: 'admin@example.org', name: 'Admin' }, { email: 'ann@example.org', name: 'Ann' }], config: config(extra) });
  contexts.push(ctx);
  const [admin, ann] = ctx.users as [TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann };
}

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body as any);
const toolNames = (body: any): string[] => (body?.tools ?? []).map((t: any) => t.function?.name);
const toolOutputs = () => chatRequests().at(-1)!.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content as string);
const mcpFrames = (frames: Frame[]) => frames.filter((f) => String(f.data.type).startsWith('mcp_call.')).map((f) => f.data as any);
const chat = async (ctx: TestContext, as: TestUser, message: string) => readFrames(await ctx.call('chat/stream', { message }, as));

describe('a stdio server of the admin (server-everything)', () => {
  test('its tools reach the model namespaced; a call streams mcp_call.* and the model reads the result', async () => {
    const { ctx, ann } = await setup();
    await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'everything', transport: 'stdio', command: everythingStdio() });
    openai.chatScript = toolCallsThenAnswer([{ id: 'c1', name: 'mcp__everything__echo', args: { message: 'hello from the model' } }], 'Echoed.');

    const frames = await chat(ctx, ann, 'Echo something.');
    expect(toolNames(chatRequests()[0])).toContain('mcp__everything__echo');
    expect(toolNames(chatRequests()[0])).toContain('mcp__everything__get-tiny-image');
    expect(typesOf(frames)).toContain('done');
    expect(mcpFrames(frames)).toEqual([
      { type: 'mcp_call.in_progress', itemId: 'c1', server: 'everything', tool: 'echo', arguments: { message: 'hello from the model' } },
      { type: 'mcp_call.completed', itemId: 'c1', content: [{ type: 'text', text: 'Echo: hello from the model' }] },
    ]);
    expect(toolOutputs()).toEqual(['Echo: hello from the model']);
  });

  test('its tools come through the tool registry: left out first, whole, when a turn\'s tools pass PARLEY_TOOLS_MAX_TOKENS', async () => {
    const { ctx, ann } = await setup({ toolsMaxTokens: 1000 });
    await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'everything', transport: 'stdio', command: everythingStdio() });
    expect(ctx.deps.tools.sources().map((s) => s.id)).toContain('mcp');

    await chat(ctx, ann, 'Hello.');
    const offered = toolNames(chatRequests()[0]);
    expect(offered).toContain('generate_canvas');
    expect(offered.filter((n) => n.startsWith('mcp__'))).toEqual([]);
  });

  test('an image result becomes the user\'s file; the event names it and the model is told', async () => {
    const { ctx, ann } = await setup();
    await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'everything', transport: 'stdio', command: everythingStdio() });
    openai.chatScript = toolCallsThenAnswer([{ id: 'i1', name: 'mcp__everything__get-tiny-image', args: {} }], 'Here.');

    const frames = await chat(ctx, ann, 'Show me an image.');
    const done = mcpFrames(frames).find((f) => f.type === 'mcp_call.completed');
    const image = done.content.find((c: any) => c.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: expect.stringMatching(/^image\//) });
    const files = (await ctx.json('files/listFiles', {}, ann)).body.files as { id: string; source?: string }[];
    expect(files.map((f) => f.id)).toContain(image.fileId);
    expect(toolOutputs()[0]).toContain(image.fileId);
  });

  test('a long call reports progress and completes; a resource result is read', async () => {
    const { ctx, ann } = await setup();
    await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'everything', transport: 'stdio', command: everythingStdio() });
    openai.chatScript = toolCallsThenAnswer(
      [
        { id: 'l1', name: 'mcp__everything__trigger-long-running-operation', args: { duration: 1, steps: 3 } },
        { id: 'r1', name: 'mcp__everything__get-resource-reference', args: { resourceType: 'Text', resourceId: 2 } },
      ],
      'Done.',
    );
    const frames = await chat(ctx, ann, 'Run it.');
    const done = mcpFrames(frames).filter((f) => f.type === 'mcp_call.completed');
    expect(done).toHaveLength(2);
    expect(toolOutputs()[0]).toContain('Long running operation completed');
    expect(done[1].content.some((c: any) => c.type === 'resource' && c.uri.includes('2'))).toBe(true);
  });

  test('killed mid-call: the call ends with a sentence, the turn answers, the next call starts the server again', async () => {
    const { ctx, ann } = await setup();
    const server = await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'everything', transport: 'stdio', command: everythingStdio() });
    openai.chatScript = toolCallsThenAnswer([{ id: 'k1', name: 'mcp__everything__trigger-long-running-operation', args: { duration: 20, steps: 20 } }], 'It failed.');
    const turn = chat(ctx, ann, 'Run a long one.');
    // Kill the server's process once the call is running.
    const until = Date.now() + 20_000;
    let pid: number | null | undefined;
    while (Date.now() < until) {
      const entry = ctx.deps.mcp.pool.peek(server.id, ann.user.id);
      pid = (entry?.conn.transport as { pid?: number | null } | undefined)?.pid;
      if (pid && entry!.busy > 0) break;
      await Bun.sleep(50);
    }
    expect(pid).toBeGreaterThan(0);
    await Bun.sleep(300);
    process.kill(pid!, 'SIGKILL');
    const frames = await turn;
    const error = mcpFrames(frames).find((f) => f.type === 'mcp_call.error');
    expect(error?.error).toMatch(/everything .*(closed the connection|lost)/);
    expect(typesOf(frames).at(-1)).toBe('done');
    expect(toolOutputs()[0]).toStartWith('The tool call failed: ');

    openai.chatScript = toolCallsThenAnswer([{ id: 'k2', name: 'mcp__everything__echo', args: { message: 'again' } }], 'Back.');
    const again = await chat(ctx, ann, 'Again.');
    expect(mcpFrames(again).find((f) => f.type === 'mcp_call.completed')?.content).toEqual([{ type: 'text', text: 'Echo: again' }]);
  });
});

describe('remote servers (server-everything over HTTP)', () => {
  test('streamable HTTP: the admin adds and tests it; its tools reach a user', async () => {
    const { ctx, admin, ann } = await setup();
    const http = await startEverythingHttp('streamableHttp');
    running.push(http);
    const added = await ctx.json('admin/addMcpServer', { name: 'remote', url: http.url }, admin);
    expect(added.status).toBe(200);
    const tested = await ctx.json('admin/testMcpServer', { id: 'remote' }, admin);
    expect(tested.body).toMatchObject({ ok: true, error: null, transport: 'streamable-http', protocolVersion: '2025-11-25', serverInfo: { name: 'mcp-servers/everything' } });
    expect(tested.body.tools.map((t: any) => t.name)).toContain('echo');

    openai.chatScript = toolCallsThenAnswer([{ id: 'h1', name: 'mcp__remote__get-sum', args: { a: 2, b: 40 } }], 'Sum.');
    const frames = await chat(ctx, ann, 'Add.');
    expect(mcpFrames(frames).at(-1)).toMatchObject({ type: 'mcp_call.completed', itemId: 'h1' });
    expect(toolOutputs()[0]).toContain('42');
  });

  test('an older server (HTTP+SSE) is reached through the fallback', async () => {
    const { ctx, admin } = await setup();
    const sse = await startEverythingHttp('sse');
    running.push(sse);
    await ctx.json('admin/addMcpServer', { name: 'older', url: sse.url }, admin);
    const tested = await ctx.json('admin/testMcpServer', { id: 'older' }, admin);
    expect(tested.body).toMatchObject({ ok: true, transport: 'sse' });
  });

  test('a 2026-07-28 server (the official server SDK, refusing 2025 clients) is spoken to in its protocol; one that takes both gets 2026-07-28', async () => {
    const { ctx, admin, ann } = await setup();
    for (const [name, legacy] of [['modern', 'reject'], ['both', 'stateless']] as const) {
      const modern = startModernMcp(legacy);
      running.push(modern);
      await ctx.json('admin/addMcpServer', { name, url: modern.url }, admin);
      const tested = await ctx.json('admin/testMcpServer', { id: name }, admin);
      expect(tested.body).toMatchObject({ ok: true, protocolVersion: '2026-07-28', transport: 'streamable-http', serverInfo: { name: 'modern-fake' } });
    }
    openai.chatScript = toolCallsThenAnswer([{ id: 'm1', name: 'mcp__modern__shout', args: { text: 'quiet' } }], 'Loud.');
    await chat(ctx, ann, 'Shout.');
    expect(toolOutputs()).toEqual(['QUIET']);
  });

  test('an address where nothing answers: the test says so in words', async () => {
    const { ctx, admin } = await setup({ mcpConnectTimeoutS: 2 });
    await ctx.json('admin/addMcpServer', { name: 'dead', url: 'http://127.0.0.1:9/mcp' }, admin);
    const tested = await ctx.json('admin/testMcpServer', { id: 'dead' }, admin);
    expect(tested.body).toMatchObject({ ok: false, needsSignIn: false });
    expect(tested.body.error).toBe('The MCP server dead could not be reached.');
  });
});

describe('other real servers', () => {
  // server-filesystem sends a file's text twice (as text and as structured content): 20 MB on the wire.
  test('server-filesystem reads a file; a 10 MB answer reaches the model cut cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-mcp-fs-'));
    writeFileSync(join(dir, 'note.txt'), 'The key is under the mat.');
    writeFileSync(join(dir, 'big.txt'), 'x'.repeat(10 * 1024 * 1024));
    const { ctx, ann } = await setup();
    await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'fs', transport: 'stdio', command: filesystemStdio(dir) });
    openai.chatScript = toolCallsThenAnswer(
      [
        { id: 'f1', name: 'mcp__fs__read_text_file', args: { path: join(dir, 'note.txt') } },
        { id: 'f2', name: 'mcp__fs__read_text_file', args: { path: join(dir, 'big.txt') } },
      ],
      'Read.',
    );
    const frames = await chat(ctx, ann, 'Read them.');
    const [note, big] = toolOutputs();
    expect(note).toBe('The key is under the mat.');
    expect(big!.length).toBeLessThan(100_500);
    expect(big).toStartWith('x'.repeat(1000));
    expect(big).toContain("[… cut: the tool's answer was 10,485,760 characters; the first 100,000 are shown (PARLEY_MCP_RESULT_MAX_CHARS).]");
    const completed = mcpFrames(frames).filter((f) => f.type === 'mcp_call.completed');
    expect(completed[1].content[0].text.length).toBeLessThan(100_500);
    expect(typesOf(frames).at(-1)).toBe('done');
  });

  test('an answer past PARLEY_MCP_RESULT_MAX_BYTES fails the call with a sentence', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-mcp-fs-'));
    writeFileSync(join(dir, 'big.txt'), 'y'.repeat(2 * 1024 * 1024));
    const { ctx, ann } = await setup({ mcpResultMaxBytes: 1024 * 1024 });
    await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'fs', transport: 'stdio', command: filesystemStdio(dir) });
    openai.chatScript = toolCallsThenAnswer([{ id: 'b1', name: 'mcp__fs__read_text_file', args: { path: join(dir, 'big.txt') } }], 'Too big.');
    const frames = await chat(ctx, ann, 'Read it.');
    expect(mcpFrames(frames).at(-1)).toEqual({
      type: 'mcp_call.error',
      itemId: 'b1',
      error: 'The MCP server fs answered more than 1048576 bytes (PARLEY_MCP_RESULT_MAX_BYTES), so Parley stopped reading it.',
    });
    expect(typesOf(frames).at(-1)).toBe('done');
  });

  test('server-memory keeps what the model tells it, per its own file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-mcp-mem-'));
    const { ctx, ann } = await setup();
    await addMcpServer(ctx.deps, { kind: 'cli' }, { name: 'memory', transport: 'stdio', command: memoryStdio(), env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } });
    openai.chatScript = toolCallsThenAnswer(
      [{ id: 'e1', name: 'mcp__memory__create_entities', args: { entities: [{ name: 'Ann', entityType: 'person', observations: ['likes tea'] }] } }],
      'Kept.',
    );
    await chat(ctx, ann, 'Remember me.');
    openai.chatScript = toolCallsThenAnswer([{ id: 'e2', name: 'mcp__memory__read_graph', args: {} }], 'Read.');
    await chat(ctx, ann, 'What do you know?');
    expect(toolOutputs()[0]).toContain('likes tea');
  });
});

describe('names', () => {
  test('namespaced within [a-zA-Z0-9_-]{1,64}, long and odd names kept apart', () => {
    expect(toolNameOf('everything', 'echo')).toBe('mcp__everything__echo');
    expect(toolNameOf('fs', 'read.file')).toMatch(/^mcp__fs__read_file_[0-9a-f]{8}$/);
    const long = toolNameOf('a-server-with-a-long-name-here', 'x'.repeat(80));
    expect(long.length).toBe(64);
    expect(long).not.toBe(toolNameOf('a-server-with-a-long-name-here', `${'x'.repeat(79)}y`));
    expect(long).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });
});
