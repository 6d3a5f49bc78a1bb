/**
 * "Ask first" (docs/chat.md, "Tool approval"): a call of a tool so marked pauses the turn with
 * `tool_call.approval_required`, and `chat/approveToolCall` answers it — once or for the
 * conversation, approve or deny — from any reconnect, after a restart, or never (the timeout).
 * The admin's switches: sources and tools marked "ask first", sources off or for some tiers.
 * Through HTTP with the fake OpenAI server, on both stores.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, until, type TestContext, type TestUser } from './helpers';
import { readFrames, SseReader, typesOf } from './sse';
import { functionCallEvents, textEvents, toolCallsThenAnswer } from './fakes/openai';
import { groupWith, send } from './group-helpers';
import type { Config } from '../src/config';
import { updateUser } from '../src/account/account.store';
import { findResponseById } from '../src/chat/response.store';
import { resumeInterruptedResponses } from '../src/chat/respond';
import { DENIED, DENIED_IN_CONVERSATION, TIMED_OUT } from '../src/tools/ask-first';
import { fakeAiForFile } from './support/fake-ai-for-file';

setDefaultTimeout(30_000);

const { openai, searxng } = fakeAiForFile();

const chatConfig = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat',
  aiBaseUrl: openai.url,
  aiModel: 'small',
  searchProvider: 'searxng',
  searxngUrl: searxng.url,
  rateLimitAi: { capacity: 1000, perMs: 1000 },
  rateLimitWrite: { capacity: 1000, perMs: 1000 },
  ...extra,
});
const responsesConfig = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-responses',
  aiBaseUrl: openai.url,
  aiApiKey: 'sk-test',
  rateLimitAi: { capacity: 1000, perMs: 1000 },
  rateLimitWrite: { capacity: 1000, perMs: 1000 },
  ...extra,
});

const USERS = [
  { email: 'admin@example.org', name: 'Ada' },
  { email: 'ann@example.org', name: 'Ann' },
  { email: 'bob@example.org', name: 'Bob' },
];

async function setup(config = chatConfig(), opts: { durable?: boolean } = {}) {
  const ctx = await createTestContext({ users: USERS, config, ...opts });
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann, bob };
}

/** The admin marks tools (by name) "ask first". */
async function askFirst(ctx: TestContext, admin: TestUser, ...names: string[]) {
  const res = await ctx.json('admin/setToolSettings', { tools: names.map((name) => ({ name, approval: 'ask' })) }, admin);
  expect(res.status).toBe(200);
}

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name ?? t.name ?? t.type);
const toolOutput = () => chatRequests().at(-1)!.messages.find((m: any) => m.role === 'tool')?.content;
const historyCall = (id = 'h1') => toolCallsThenAnswer([{ id, name: 'search_history', args: { query: 'tea' } }], 'Done.');

const answer = (ctx: TestContext, as: TestUser, responseId: string, itemId: string, decision: 'approve' | 'deny', scope?: 'once' | 'conversation') =>
  ctx.json('chat/approveToolCall', { responseId, itemId, decision, ...(scope ? { scope } : {}) }, as);

describe('ask first, on openai-chat', () => {
  test('the call waits for the answer: approval_required, then (approved) the tool runs and the turn goes on', async () => {
    const { ctx, admin, ann } = await setup();
    await askFirst(ctx, admin, 'search_history');
    openai.chatScript = historyCall();
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'what tea do I like?' }, ann));
    const head = await reader.until('tool_call.approval_required');
    const responseId = head[1]!.data.responseId;
    expect(head.at(-1)!.data).toEqual({ type: 'tool_call.approval_required', itemId: 'h1', name: 'search_history', label: 'History search', arguments: { query: 'tea' } });
    // Nothing runs meanwhile: one request upstream, the tool's round not answered.
    await Bun.sleep(200);
    expect(chatRequests()).toHaveLength(1);
    const row = (await ctx.store.read((tx) => findResponseById(tx, responseId)))!;
    expect(row.status).toBe('in_progress');

    expect((await answer(ctx, ann, responseId, 'h1', 'approve')).body).toEqual({ success: true, status: 'approved' });
    const rest = await reader.all();
    expect(typesOf(rest)).toEqual(['tool_call.approval_resolved', 'history.in_progress', 'history.completed', 'content_part.added', 'text.delta', 'done']);
    expect(rest[0]!.data).toEqual({ type: 'tool_call.approval_resolved', itemId: 'h1', decision: 'approved', decidedBy: 'user' });
    expect(toolOutput()).toBe('Nothing found in earlier conversations.');
    // Answered twice: 409, saying how.
    const again = await answer(ctx, ann, responseId, 'h1', 'deny');
    expect(again.status).toBe(409);
    expect(again.body.data).toEqual({ status: 'approved', decidedBy: 'user' });
  });

  test('denied: the tool does not run, and the model is told so', async () => {
    const { ctx, admin, ann } = await setup();
    await askFirst(ctx, admin, 'search_history');
    openai.chatScript = historyCall();
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    const head = await reader.until('tool_call.approval_required');
    expect((await answer(ctx, ann, head[1]!.data.responseId, 'h1', 'deny')).body).toEqual({ success: true, status: 'denied' });
    const rest = await reader.all();
    expect(typesOf(rest)).toEqual(['tool_call.approval_resolved', 'content_part.added', 'text.delta', 'done']);
    expect(rest[0]!.data.decision).toBe('denied');
    expect(toolOutput()).toBe(DENIED('search_history'));
  });

  test('"always for this conversation": later calls there run (or are refused) without asking; other conversations still ask; the rule can be taken back', async () => {
    const { ctx, admin, ann } = await setup();
    await askFirst(ctx, admin, 'search_history');
    openai.chatScript = historyCall();
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    const head = await reader.until('tool_call.approval_required');
    const conversationId = head[0]!.data.conversationId;
    await answer(ctx, ann, head[1]!.data.responseId, 'h1', 'approve', 'conversation');
    await reader.all();

    openai.chatScript = historyCall('h2');
    const second = await readFrames(await ctx.call('chat/stream', { message: 'coffee?', conversationId }, ann));
    expect(typesOf(second)).toEqual(['response.created', 'history.in_progress', 'history.completed', 'content_part.added', 'text.delta', 'done']);
    const rules = (await ctx.json('chat/listToolRules', { conversationId }, ann)).body.rules;
    expect(rules).toEqual([{ toolName: 'search_history', decision: 'approve', createdAt: expect.any(String) }]);

    // Another conversation asks again.
    openai.chatScript = historyCall('h3');
    const other = new SseReader(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    const otherHead = await other.until('tool_call.approval_required');
    await answer(ctx, ann, otherHead[1]!.data.responseId, 'h3', 'deny', 'conversation');
    await other.all();
    openai.chatScript = historyCall('h4');
    const refused = await readFrames(await ctx.call('chat/stream', { message: 'again', conversationId: otherHead[0]!.data.conversationId }, ann));
    expect(typesOf(refused)).toEqual(['response.created', 'content_part.added', 'text.delta', 'done']);
    expect(toolOutput()).toBe(DENIED_IN_CONVERSATION('search_history'));

    expect((await ctx.json('chat/deleteToolRule', { conversationId, toolName: 'search_history' }, ann)).body).toEqual({ success: true });
    expect((await ctx.json('chat/deleteToolRule', { conversationId, toolName: 'search_history' }, ann)).body).toEqual({ success: false });
    openai.chatScript = historyCall('h5');
    const asks = new SseReader(await ctx.call('chat/stream', { message: 'tea?', conversationId }, ann));
    const asked = await asks.until('tool_call.approval_required');
    await answer(ctx, ann, asked[0]!.data.responseId, 'h5', 'approve');
    await asks.all();
  });

  test('nobody answers: past PARLEY_TOOL_APPROVAL_TIMEOUT_S the call is denied, the model told why; answering then is a 409', async () => {
    const { ctx, admin, ann } = await setup(chatConfig({ toolApprovalTimeoutS: 1 }));
    await askFirst(ctx, admin, 'search_history');
    openai.chatScript = historyCall();
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'tool_call.approval_required', 'tool_call.approval_resolved', 'content_part.added', 'text.delta', 'done']);
    expect(frames[3]!.data).toEqual({ type: 'tool_call.approval_resolved', itemId: 'h1', decision: 'denied', decidedBy: 'timeout' });
    expect(toolOutput()).toBe(TIMED_OUT('search_history', 1));
    const late = await answer(ctx, ann, frames[1]!.data.responseId, 'h1', 'approve');
    expect(late.status).toBe(409);
    expect(late.body.message).toContain('waited too long');
  });

  test('the pause survives a reconnect: the prompt is replayed, the answer given from the new stream goes through', async () => {
    const { ctx, admin, ann } = await setup();
    await askFirst(ctx, admin, 'search_history');
    openai.chatScript = historyCall();
    const first = new SseReader(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    const head = await first.until('tool_call.approval_required');
    await first.close(); // the phone went into a tunnel
    const responseId = head[1]!.data.responseId;
    const again = new SseReader(await ctx.call('chat/resumeStream', { responseId }, ann));
    const replayed = await again.until('tool_call.approval_required');
    expect(replayed).toEqual(head);
    await answer(ctx, ann, responseId, 'h1', 'approve');
    expect(typesOf(await again.all()).at(-1)).toBe('done');
  });

  test('who may answer: the user whose turn it is; a writer of the conversation 403, anyone else 404; unknown call 404', async () => {
    const { ctx, admin, ann, bob } = await setup();
    await askFirst(ctx, admin, 'search_history');
    openai.chatScript = historyCall();
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    const head = await reader.until('tool_call.approval_required');
    const responseId = head[1]!.data.responseId;
    expect((await answer(ctx, bob, responseId, 'h1', 'approve')).status).toBe(404);
    expect((await answer(ctx, ann, responseId, 'nope', 'approve')).status).toBe(404);
    expect((await answer(ctx, ann, 'no-such-response', 'h1', 'approve')).status).toBe(404);
    expect((await ctx.json('chat/listToolRules', { conversationId: head[0]!.data.conversationId }, bob)).status).toBe(403);
    // Bob writes to the conversation now, but the turn is Ann's.
    await ctx.json('chat/shareConversation', { conversationId: head[0]!.data.conversationId, email: 'bob@example.org' }, ann);
    const [offer] = (await ctx.json('chat/listPendingShares', {}, bob)).body.shares;
    await ctx.json('chat/acceptShare', { shareId: offer.shareId }, bob);
    expect((await answer(ctx, bob, responseId, 'h1', 'approve')).status).toBe(403);
    await answer(ctx, ann, responseId, 'h1', 'deny');
    await reader.all();
  });

  test('cancelled while it waits: the turn ends cancelled, the call is closed (409 to a late answer)', async () => {
    const { ctx, admin, ann } = await setup();
    await askFirst(ctx, admin, 'search_history');
    openai.chatScript = historyCall();
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    const head = await reader.until('tool_call.approval_required');
    const responseId = head[1]!.data.responseId;
    expect((await ctx.json('chat/cancelResponse', { responseId }, ann)).body.success).toBe(true);
    const rest = await reader.all();
    expect(rest.at(-1)!.data).toEqual({ type: 'error', message: 'The response was cancelled.' });
    expect((await ctx.store.read((tx) => findResponseById(tx, responseId)))!.status).toBe('cancelled');
    const late = await answer(ctx, ann, responseId, 'h1', 'approve');
    expect(late.status).toBe(409);
    expect(late.body.data).toEqual({ status: 'denied', decidedBy: 'ended' });
    expect(chatRequests()).toHaveLength(1);
  });
});

describe("the admin's switches", () => {
  test('a whole source "ask first"; one of its tools exempted by name', async () => {
    const { ctx, admin, ann } = await setup();
    const set = await ctx.json('admin/setToolSettings', { sources: [{ id: 'history', approval: 'ask' }] }, admin);
    expect(set.body.sources.find((s: any) => s.id === 'history')).toMatchObject({
      approval: 'ask',
      enabled: true,
      tiers: null,
      tools: [{ name: 'search_history', label: 'History search', approval: 'ask', description: expect.any(String) }],
    });
    openai.chatScript = historyCall();
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    const head = await reader.until('tool_call.approval_required');
    await answer(ctx, ann, head[1]!.data.responseId, 'h1', 'approve');
    await reader.all();

    await ctx.json('admin/setToolSettings', { tools: [{ name: 'search_history', approval: 'never' }] }, admin);
    openai.chatScript = historyCall('h2');
    expect(typesOf(await readFrames(await ctx.call('chat/stream', { message: 'tea?' }, ann)))).toContain('history.completed');
    const got = (await ctx.json('admin/getToolSettings', {}, admin)).body;
    expect(got.tools).toEqual([{ name: 'search_history', approval: 'never' }]);
    // null: back to the source's choice.
    await ctx.json('admin/setToolSettings', { tools: [{ name: 'search_history', approval: null }] }, admin);
    expect((await ctx.json('admin/getToolSettings', {}, admin)).body.tools).toEqual([]);
  });

  test('a source switched off, or for some tiers only, is not offered to the others', async () => {
    const { ctx, admin, ann } = await setup();
    await ctx.json('admin/setToolSettings', { sources: [{ id: 'canvas', enabled: false }, { id: 'web_search', tiers: ['PRO'] }] }, admin);
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    expect(toolNames(chatRequests()[0])).toEqual(['search_history']);
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    expect(toolNames(chatRequests()[1])).toEqual(['search_history', 'web_search']);
    const view = (await ctx.json('admin/getToolSettings', {}, admin)).body.sources;
    expect(view.map((s: any) => [s.id, s.enabled, s.tiers])).toEqual([
      ['memory', true, null],
      ['files', true, null],
      ['images', true, null],
      ['video', true, null],
      ['canvas', false, null],
      ['history', true, null],
      ['web_search', true, ['PRO']],
      ['mcp', true, null],
      // Listed whatever PARLEY_CODE_INTERPRETER says, off by default (its sandboxes cost memory).
      ['code', false, null],
    ]);
    // What a source lacks here, and what one costs, said to the admin.
    const byId = Object.fromEntries(view.map((s: any) => [s.id, s]));
    expect(byId.images).toMatchObject({ available: false, unavailableReason: expect.stringContaining('No images connection is enabled') });
    expect(byId.video).toMatchObject({ available: false, unavailableReason: 'No video connection is enabled: add one of kind video under Connections (docs/video.md).', note: null });
    expect(byId.web_search).toMatchObject({ available: true, unavailableReason: null });
    expect(byId.code).toMatchObject({ available: true, unavailableReason: null, note: expect.stringContaining('at most 2 run at once (PARLEY_CODE_MAX_SANDBOXES)') });
  });

  test('an unknown source is a 400; the settings are admins\' only', async () => {
    const { ctx, admin, ann } = await setup();
    const res = await ctx.json('admin/setToolSettings', { sources: [{ id: 'nope', enabled: false }] }, admin);
    expect(res.status).toBe(400);
    expect(res.body.data.issues[0].path).toEqual(['sources', 0, 'id']);
    expect((await ctx.json('admin/getToolSettings', {}, ann)).status).toBe(403);
    expect((await ctx.json('admin/setToolSettings', {}, ann)).status).toBe(403);
  });

  test('a group answer cannot ask anyone: an "ask first" tool is not offered there', async () => {
    const { ctx, admin, ann, bob } = await setup();
    await askFirst(ctx, admin, 'web_search');
    const g = await groupWith(ctx, ann, [bob]);
    await send(ctx, ann, g.id, '@ai hello');
    await until(() => chatRequests().length > 0, 'the group answer');
    expect(chatRequests()[0].tools).toBeUndefined();
  });
});

describe('ask first across a restart (openai-responses, which resumes its turns)', () => {
  /** A chat turn that calls search_history, read until it asks; then the "process" dies. */
  async function pausedThenKilled() {
    let turn = 0;
    openai.responsesScript = () => (turn++ === 0 ? functionCallEvents('call_1', 'search_history', { query: 'tea' }) : textEvents('Done.', 1));
    const { ctx, admin, ann } = await setup(responsesConfig(), { durable: true });
    await askFirst(ctx, admin, 'search_history');
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'tea?' }, ann));
    const head = await reader.until('tool_call.approval_required');
    await reader.close();
    await ctx.deps.tasks.shutdown(); // the process "dies" while the call waits
    await ctx.close();
    return { ctx, ann, head, responseId: head[1]!.data.responseId as string };
  }

  test('answered while no instance ran the turn: the resumed turn finds the answer and goes on', async () => {
    const { ctx: before, ann, head, responseId } = await pausedThenKilled();
    const down = await createTestContext({ config: responsesConfig(), sameDatabaseAs: before });
    // Answered through an app that does not run the turn (another instance, or the same one before it resumes).
    expect((await answer(down, ann, responseId, 'call_1', 'approve')).body.status).toBe('approved');
    expect(await resumeInterruptedResponses(down.deps)).toEqual({ resumed: 1, failed: 0 });
    const rest = await readFrames(await down.call('chat/stream', { message: 'x' }, { 'x-api-key': ann.key, 'last-event-id': head.at(-1)!.id! }));
    expect(typesOf(rest)).toEqual(['tool_call.approval_resolved', 'history.in_progress', 'history.completed', 'content_part.added', 'text.delta', 'done']);
    // The prompt was not asked twice.
    const all = await readFrames(await down.call('chat/resumeStream', { responseId }, ann));
    expect(typesOf(all).filter((t) => t === 'tool_call.approval_required')).toHaveLength(1);
    await down.close();
  });

  test('still waiting after the restart: the resumed turn waits on, and an answer then reaches it', async () => {
    const { ctx: before, ann, head, responseId } = await pausedThenKilled();
    const after = await createTestContext({ config: responsesConfig(), sameDatabaseAs: before });
    expect(await resumeInterruptedResponses(after.deps)).toEqual({ resumed: 1, failed: 0 });
    const reader = new SseReader(await after.call('chat/stream', { message: 'x' }, { 'x-api-key': ann.key, 'last-event-id': head.at(-1)!.id! }));
    await Bun.sleep(300);
    expect((await after.store.read((tx) => findResponseById(tx, responseId)))!.status).toBe('in_progress');
    await answer(after, ann, responseId, 'call_1', 'deny');
    const rest = await reader.all();
    expect(typesOf(rest)).toEqual(['tool_call.approval_resolved', 'content_part.added', 'text.delta', 'done']);
    const followUp = openai.requests.filter((r) => r.path === 'POST /v1/responses').at(-1)!.body;
    expect(followUp.input).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: DENIED('search_history') }]);
    await after.close();
  });
});
