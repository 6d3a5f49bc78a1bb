/**
 * MCP servers per assistant (docs/assistants.md, "Knowledge and MCP servers"): `mcpServerIds`
 * names the servers whose tools its turns get (null: whatever its user has; []: none), checked
 * when it is saved; and "ask first" for an MCP server or one of its tools (docs/mcp.md): the call
 * waits for the user's answer, approved it reaches the server with its `mcp_call.*` events,
 * denied it never does. Through HTTP with the fake OpenAI server and MCP servers built with the
 * official server SDK (test/fakes/mcp-modern.ts), on both stores.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, SseReader, typesOf, type Frame } from './sse';
import { functionCallEvents, textEvents, toolCallsThenAnswer } from './fakes/openai';
import { startModernMcp } from './fakes/mcp-modern';
import { assistantsConfig, assistantsContext } from './support/assistant-users';
import { DENIED } from '../src/tools/ask-first';
import { resumeInterruptedResponses } from '../src/chat/respond';
import { fakeAiForFile } from './support/fake-ai-for-file';

setDefaultTimeout(30_000);

const fakes = fakeAiForFile();
const { openai } = fakes;
const running: { stop(): void }[] = [];
const contexts: TestContext[] = [];
afterAll(async () => {
  for (const c of contexts) await c.deps.mcp.close();
  for (const s of running) s.stop();
});

async function setup() {
  const users = await assistantsContext(fakes);
  contexts.push(users.ctx);
  return users;
}

function mcpServer() {
  const s = startModernMcp();
  running.push(s);
  return s;
}

/** An admin's server (every user has it), or with `as` a user's own. */
async function addServer(ctx: TestContext, name: string, url: string, as: TestUser, own = false, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await ctx.json(own ? 'mcp/addServer' : 'admin/addMcpServer', { name, url, ...extra }, as);
  expect(res.status).toBe(200);
  return res.body.server.id;
}

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const toolNames = (body: any): string[] => (body?.tools ?? []).map((t: any) => t.function?.name);
const mcpTools = (body: any) => toolNames(body).filter((n) => n.startsWith('mcp__'));
const toolOutput = () => chatRequests().at(-1)!.messages.find((m: any) => m.role === 'tool')?.content;
const mcpFrames = (frames: Frame[]) => frames.filter((f) => String(f.data.type).startsWith('mcp_call.')).map((f) => f.data);
const offered = async (ctx: TestContext, as: TestUser, assistantId?: string) => {
  await readFrames(await ctx.call('chat/stream', { message: 'hi', ...(assistantId ? { assistantId } : {}) }, as));
  return chatRequests().at(-1);
};

describe('MCP servers per assistant', () => {
  test('some servers, none, or whatever the user has; checked when saved; a removed one drops out', async () => {
    const { ctx, admin, ann, bob } = await setup();
    const alpha = await addServer(ctx, 'alpha', mcpServer().url, admin);
    const beta = await addServer(ctx, 'beta', mcpServer().url, admin);
    await ctx.json('admin/setMcpSettings', { userServers: true, userServersAllowPrivate: true }, admin);
    const mine = await addServer(ctx, 'mine', mcpServer().url, ann, true);
    const bobs = await addServer(ctx, 'bobs', mcpServer().url, bob, true);

    expect(mcpTools(await offered(ctx, ann))).toEqual(['mcp__alpha__shout', 'mcp__beta__shout', 'mcp__mine__shout']);

    const some = (await ctx.json('assistants/create', { name: 'Some', mcpServerIds: [alpha, mine] }, ann)).body.assistant;
    expect(some.mcpServerIds).toEqual([alpha, mine]);
    expect(mcpTools(await offered(ctx, ann, some.id))).toEqual(['mcp__alpha__shout', 'mcp__mine__shout']);
    // Named servers stand beside its `tools`: with no other tools, those servers' tools only.
    await ctx.json('assistants/update', { assistantId: some.id, tools: [] }, ann);
    expect(toolNames(await offered(ctx, ann, some.id))).toEqual(['mcp__alpha__shout', 'mcp__mine__shout']);

    const none = (await ctx.json('assistants/create', { name: 'None', mcpServerIds: [] }, ann)).body.assistant;
    const noneOffers = await offered(ctx, ann, none.id);
    expect(mcpTools(noneOffers)).toEqual([]);
    expect(toolNames(noneOffers)).toContain('generate_canvas');

    const all = (await ctx.json('assistants/create', { name: 'All', mcpServerIds: null }, ann)).body.assistant;
    expect(all.mcpServerIds).toBeNull();
    expect(mcpTools(await offered(ctx, ann, all.id))).toHaveLength(3);
    // null follows `tools`: a list without `mcp` leaves the servers out, one naming it lets them in.
    await ctx.json('assistants/update', { assistantId: all.id, tools: ['history'] }, ann);
    expect(mcpTools(await offered(ctx, ann, all.id))).toEqual([]);
    await ctx.json('assistants/update', { assistantId: all.id, tools: ['history', 'mcp'] }, ann);
    expect(mcpTools(await offered(ctx, ann, all.id))).toHaveLength(3);

    // Refused: another user's server, an unknown one; a user's server on a shared assistant.
    const refused = await ctx.json('assistants/create', { name: 'Bad', mcpServerIds: [alpha, bobs, 'nope'] }, ann);
    expect(refused.status).toBe(400);
    expect(refused.body.data.issues).toEqual([
      { path: ['mcpServerIds', 1], message: `No MCP server ${bobs} that you may use (mcp/listServers).` },
      { path: ['mcpServerIds', 2], message: 'No MCP server nope that you may use (mcp/listServers).' },
    ]);
    expect((await ctx.json('assistants/update', { assistantId: some.id, mcpServerIds: [bobs] }, ann)).status).toBe(400);
    const sharedBad = await ctx.json('assistants/create', { name: 'Shared', shared: true, mcpServerIds: [mine] }, admin);
    expect(sharedBad.status).toBe(400);
    expect(sharedBad.body.data.issues[0].path).toEqual(['mcpServerIds', 0]);

    // Shared with the admin's beta: Bob gets beta's tools only.
    const shared = (await ctx.json('assistants/create', { name: 'Shared', shared: true, mcpServerIds: [beta] }, admin)).body.assistant;
    expect(mcpTools(await offered(ctx, bob, shared.id))).toEqual(['mcp__beta__shout']);

    // A server removed: gone from the assistant; one it still has goes on.
    expect((await ctx.json('admin/removeMcpServer', { id: alpha }, admin)).status).toBe(200);
    expect((await ctx.json('assistants/get', { assistantId: some.id }, ann)).body.assistant.mcpServerIds).toEqual([mine]);
    expect(mcpTools(await offered(ctx, ann, some.id))).toEqual(['mcp__mine__shout']);
  });
});

describe('"ask first" for an MCP server', () => {
  const answer = (ctx: TestContext, as: TestUser, responseId: string, itemId: string, decision: 'approve' | 'deny') =>
    ctx.json('chat/approveToolCall', { responseId, itemId, decision }, as);

  test('a server marked ask: the call waits; approved, it reaches the server with its mcp_call events; denied, it never does', async () => {
    const { ctx, admin, ann } = await setup();
    const loud = mcpServer();
    await addServer(ctx, 'loud', loud.url, admin, false, { approval: 'ask' });

    openai.chatScript = toolCallsThenAnswer([{ id: 'm1', name: 'mcp__loud__shout', args: { text: 'hello' } }], 'Shouted.');
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'Shout hello.' }, ann));
    const head = await reader.until('tool_call.approval_required');
    expect(head.at(-1)!.data).toEqual({ type: 'tool_call.approval_required', itemId: 'm1', name: 'mcp__loud__shout', label: 'loud: shout', arguments: { text: 'hello' } });
    await Bun.sleep(200);
    expect(loud.calls).toEqual([]);
    expect((await answer(ctx, ann, head[1]!.data.responseId, 'm1', 'approve')).body).toEqual({ success: true, status: 'approved' });
    const rest = await reader.all();
    expect(typesOf(rest)).toEqual(['tool_call.approval_resolved', 'mcp_call.in_progress', 'mcp_call.completed', 'content_part.added', 'text.delta', 'done']);
    expect(mcpFrames(rest)).toEqual([
      { type: 'mcp_call.in_progress', itemId: 'm1', server: 'loud', tool: 'shout', arguments: { text: 'hello' } },
      { type: 'mcp_call.completed', itemId: 'm1', content: [{ type: 'text', text: 'HELLO' }] },
    ]);
    expect(loud.calls).toEqual(['hello']);

    openai.chatScript = toolCallsThenAnswer([{ id: 'm2', name: 'mcp__loud__shout', args: { text: 'secret' } }], 'Not shouted.');
    const denied = new SseReader(await ctx.call('chat/stream', { message: 'Shout secret.' }, ann));
    const asked = await denied.until('tool_call.approval_required');
    await answer(ctx, ann, asked[1]!.data.responseId, 'm2', 'deny');
    const after = await denied.all();
    expect(typesOf(after)).toEqual(['tool_call.approval_resolved', 'content_part.added', 'text.delta', 'done']);
    expect(toolOutput()).toBe(DENIED('mcp__loud__shout'));
    expect(loud.calls).toEqual(['hello']);
  });

  test('one tool of a server marked ask by the admin\'s tool settings; another server\'s tools run at once', async () => {
    const { ctx, admin, ann } = await setup();
    const loud = mcpServer();
    const quiet = mcpServer();
    await addServer(ctx, 'loud', loud.url, admin);
    await addServer(ctx, 'quiet', quiet.url, admin);
    expect((await ctx.json('admin/setToolSettings', { tools: [{ name: 'mcp__loud__shout', approval: 'ask' }] }, admin)).status).toBe(200);

    openai.chatScript = toolCallsThenAnswer([{ id: 'q1', name: 'mcp__quiet__shout', args: { text: 'now' } }], 'Done.');
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Shout now.' }, ann));
    expect(typesOf(frames)).not.toContain('tool_call.approval_required');
    expect(quiet.calls).toEqual(['now']);

    openai.chatScript = toolCallsThenAnswer([{ id: 'l1', name: 'mcp__loud__shout', args: { text: 'later' } }], 'Done.');
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'Shout later.' }, ann));
    const head = await reader.until('tool_call.approval_required');
    expect(head.at(-1)!.data.name).toBe('mcp__loud__shout');
    await answer(ctx, ann, head[1]!.data.responseId, 'l1', 'deny');
    await reader.all();
    expect(loud.calls).toEqual([]);
  });

  test('across a restart: an assistant\'s ask-first server, approved while no instance ran the turn, is called once when the turn resumes', async () => {
    let round = 0;
    openai.responsesScript = () => (round++ === 0 ? functionCallEvents('call_1', 'mcp__loud__shout', { text: 'wake' }) : textEvents('Shouted.', 1));
    const responses = { aiProvider: 'openai-responses' as const, aiApiKey: 'sk-test' };
    const { ctx: before, admin, ann } = await assistantsContext(fakes, responses, { durable: true });
    const loud = mcpServer();
    const loudId = await addServer(before, 'loud', loud.url, admin, false, { approval: 'ask' });
    await addServer(before, 'other', mcpServer().url, admin);
    const a = (await before.json('assistants/create', { name: 'Caller', mcpServerIds: [loudId] }, ann)).body.assistant;
    const reader = new SseReader(await before.call('chat/stream', { message: 'Wake them.', assistantId: a.id }, ann));
    const head = await reader.until('tool_call.approval_required');
    const responseId = head[1]!.data.responseId as string;
    await reader.close();
    await before.deps.tasks.shutdown(); // the process "dies" while the call waits
    await before.deps.mcp.close();
    await before.close();

    const after = await createTestContext({ config: assistantsConfig(fakes, responses), sameDatabaseAs: before });
    contexts.push(after);
    expect((await answer(after, ann, responseId, 'call_1', 'approve')).body.status).toBe('approved');
    expect(loud.calls).toEqual([]);
    expect(await resumeInterruptedResponses(after.deps)).toEqual({ resumed: 1, failed: 0 });
    const rest = await readFrames(await after.call('chat/stream', { message: 'x' }, { 'x-api-key': ann.key, 'last-event-id': head.at(-1)!.id! }));
    expect(typesOf(rest)).toEqual(['tool_call.approval_resolved', 'mcp_call.in_progress', 'mcp_call.completed', 'content_part.added', 'text.delta', 'done']);
    expect(loud.calls).toEqual(['wake']);
    // The assistant's choice held on the resumed turn: only its server's tools were offered.
    const resumed = openai.requests.filter((r) => r.path === 'POST /v1/responses').map((r) => r.body as any);
    expect(resumed.map((b) => (b.tools ?? []).map((t: any) => t.name).filter((n: string) => n?.startsWith('mcp__')))).toEqual([['mcp__loud__shout'], ['mcp__loud__shout']]);
  });
});
