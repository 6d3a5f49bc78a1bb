import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { captureLog, createTestContext, sqliteOnly, until, SPEC_ERRORS, type TestContext } from './helpers';
import { SseReader, readFrames, typesOf, type Frame } from './sse';
import { failedTerminal, functionCallEvents, reasoningEvents, startFakeOpenAI, textEvents, webSearchEvents } from './fakes/openai';
import { startFakeSearxng } from './fakes/searxng';
import type { Config } from '../src/config';
import { resumeInterruptedResponses, RESTART_MESSAGE } from '../src/chat/respond';
import { findResponseById, pruneResponseEvents } from '../src/chat/response.store';
import { listItems } from '../src/chat/conversation.store';
import { findWidgetById } from '../src/widgets/widget.store';
import type { ResearchStatusPush } from '../src/notifications/notifier';
import { responseTopic } from '../src/chat/event-log';

const openai = startFakeOpenAI();
const searx = startFakeSearxng();
afterAll(() => {
  openai.stop();
  searx.stop();
});
beforeEach(() => {
  openai.eventDelayMs = 0;
  openai.cancelDelayMs = 0;
  searx.pageDelayMs = 0;
  openai.dropAfter = undefined;
  openai.responsesScript = () => textEvents('Hello from the fake.');
});

const canvases = async (ctx: TestContext) => Number((await ctx.query<{ n: number | string }>(sql`SELECT count(*) AS n FROM widgets WHERE widget_type = 'canvas'`))[0]!.n);
const lastStoredSeq = async (ctx: TestContext, responseId: string) =>
  Number((await ctx.query<{ n: number | string }>(sql`SELECT max(seq) AS n FROM response_events WHERE response_id = ${responseId}`))[0]!.n);

/** The items of the conversation a response belongs to. */
async function itemsOfResponse(ctx: TestContext, responseId: string) {
  const { conversationId } = (await ctx.store.read((tx) => findResponseById(tx, responseId)))!;
  return ctx.store.read((tx) => listItems(tx, conversationId));
}

/** Responses the fake has been asked to create, over the whole file. */
const postCount = () => openai.requests.filter((r) => r.path.startsWith('POST /v1/responses')).length;

const responsesConfig = (extra: Partial<Config> = {}): Partial<Config> => ({ aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test', ...extra });
const chatConfig = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small', searchProvider: 'searxng', searxngUrl: searx.url,
  fetchAllowPrivate: true, researchBreadth: 1, researchDepth: 1, ...extra,
});
const users = [{ email: 'ann@example.org' }, { email: 'bob@example.org' }];
const research = (ctx: TestContext, body: unknown, headers: Record<string, string> = {}, as = ctx.users[0]!) =>
  ctx.call('chat/streamDeepResearch', body, { 'x-api-key': as.key, ...headers });
const text = (frames: Frame[]) => frames.filter((f) => f.data.type === 'text.delta').map((f) => f.data.delta).join('');
const seqs = (frames: Frame[]) => frames.filter((f) => f.id).map((f) => Number(f.id!.split(':')[1]));

describe('chat/streamDeepResearch', () => {
  test('without a provider: conversation.created → response.created → error saying how to configure one', async () => {
    const ctx = await createTestContext({ users });
    const res = await research(ctx, { message: 'Hi' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toStartWith('text/event-stream');
    const frames = await readFrames(res);
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'error']);
    expect(frames.every((f) => f.event === 'message')).toBe(true);
    const rid = frames[1]!.data.responseId;
    expect(frames.map((f) => f.id)).toEqual([`${rid}:1`, `${rid}:2`, `${rid}:3`]);
    expect(frames[2]!.data.message).toContain('PARLEY_AI_PROVIDER');
    expect((await ctx.store.read((tx) => findResponseById(tx, rid)))!.status).toBe('failed');
  });

  test('400 envelope before any stream when message is missing; 401 without credentials', async () => {
    const ctx = await createTestContext({ users, config: responsesConfig() });
    const { status, body } = await ctx.json('chat/streamDeepResearch', { conversationId: 'x' }, ctx.users[0]);
    expect(status).toBe(400);
    expect(body).toMatchObject({ defined: false, code: 'BAD_REQUEST', status: 400 });
    expect(body.data.issues[0].path).toEqual(['message']);
    const anon = await ctx.json('chat/streamDeepResearch', { message: 'x' });
    expect(anon.body).toEqual(SPEC_ERRORS[401]);
  });

  test('openai-responses: event order, images forwarded, items stored, push sent', async () => {
    const pushes: ResearchStatusPush[] = [];
    const ctx = await createTestContext({ users, config: responsesConfig(), deps: { notifier: { researchStatus: async (p) => void pushes.push(p) } } });
    openai.responsesScript = () => [...reasoningEvents('Plan.'), ...webSearchEvents('ws_1', 'tides', ['https://example.org/tides']), ...textEvents('Tides come from the moon.')];
    const frames = await readFrames(await research(ctx, { message: 'Why tides?', images: [{ imageUrl: 'https://img.example/a.png', detail: 'high' }] }));
    expect(typesOf(frames)).toEqual([
      'conversation.created', 'response.created', 'reasoning_text.delta', 'reasoning_text.done', 'web_search.in_progress', 'web_search.completed',
      'content_part.added', 'text.delta', 'text.delta', 'text.delta', 'done',
    ]);
    expect(seqs(frames)).toEqual(frames.map((_, i) => i + 1));
    const { conversationId } = frames[0]!.data;
    const rid = frames[1]!.data.responseId;
    const sent = openai.requests.findLast((r) => r.path === 'POST /v1/responses')!.body;
    expect(sent.input.at(-1).content[1]).toEqual({ type: 'input_image', image_url: 'https://img.example/a.png', detail: 'high' });
    expect(sent).toMatchObject({ background: true, stream: true, model: 'o4-mini-deep-research' });
    const items = await ctx.store.read((tx) => listItems(tx, conversationId));
    expect(items.map((i) => [i.role, i.content])).toEqual([['user', 'Why tides?'], ['assistant', 'Tides come from the moon.']]);
    expect(await ctx.store.read((tx) => findResponseById(tx, rid))).toMatchObject({ status: 'completed', kind: 'research', upstreamId: expect.stringMatching(/^resp_fake_/) });
    await Bun.sleep(5);
    expect(pushes).toEqual([{ userId: ctx.users[0]!.user.id, conversationId, responseId: rid, status: 'completed', title: 'Why tides?' }]);
    // A later turn in the renamed conversation: the push names the conversation, not the new message.
    expect((await ctx.json('chat/renameConversation', { conversationId, title: 'The moon and the sea' }, ctx.users[0])).status).toBe(200);
    await readFrames(await research(ctx, { conversationId, message: 'And spring tides?' }));
    await Bun.sleep(5);
    expect(pushes.at(-1)).toMatchObject({ status: 'completed', title: 'The moon and the sea' });
  });

  test('an existing conversation: no conversation.created, history sent; unknown or foreign → in-stream error', async () => {
    const ctx = await createTestContext({ users, config: responsesConfig() });
    const first = await readFrames(await research(ctx, { message: 'One' }));
    const conversationId = first[0]!.data.conversationId;
    const second = await readFrames(await research(ctx, { message: 'Two', conversationId }));
    expect(typesOf(second)[0]).toBe('response.created');
    expect(typesOf(second).at(-1)).toBe('done');
    const sent = openai.requests.findLast((r) => r.path === 'POST /v1/responses')!.body;
    expect(sent.input.map((m: any) => [m.role, m.content])).toEqual([['user', 'One'], ['assistant', 'Hello from the fake.'], ['user', 'Two']]);
    for (const [as, id] of [[ctx.users[1]!, conversationId], [ctx.users[0]!, 'nope']] as const) {
      const frames = await readFrames(await research(ctx, { message: 'x', conversationId: id }, {}, as));
      expect(typesOf(frames)).toEqual(['error']);
      expect(frames[0]!.data.message).toContain('not found');
      expect(frames[0]!.id).toMatch(/^[0-9a-f-]{36}:1$/);
    }
  });

  test('upstream failure → error event, status failed', async () => {
    const ctx = await createTestContext({ users, config: responsesConfig() });
    openai.responsesScript = () => failedTerminal('The model is overloaded.');
    const frames = await readFrames(await research(ctx, { message: 'x' }));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'error']);
    expect(frames[2]!.data.message).toBe('The model is overloaded.');
    openai.responsesScript = () => ({ fail: 503 });
    const down = await readFrames(await research(ctx, { message: 'x' }));
    expect(down.at(-1)!.data).toMatchObject({ type: 'error', message: expect.stringContaining('HTTP 503') });
    expect((await ctx.store.read((tx) => findResponseById(tx, down[1]!.data.responseId)))!.status).toBe('failed');
  });

  test('disconnect mid-stream, resume by Last-Event-ID and chat/resumeStream: no gap, no duplicate', async () => {
    const ctx = await createTestContext({ users, config: responsesConfig() });
    const full = 'abcdefghijklmnopqrstuvwxyz0123456789';
    openai.responsesScript = () => textEvents(full, full.length);
    openai.eventDelayMs = 3;
    const first = new SseReader(await research(ctx, { message: 'x' }));
    const head = await first.all(8);
    await first.close();
    const last = head.at(-1)!.id!;
    const rest = await readFrames(await research(ctx, { message: 'x' }, { 'last-event-id': last }));
    const all = [...head, ...rest];
    expect(seqs(all)).toEqual(all.map((_, i) => i + 1));
    expect(text(all)).toBe(full);
    expect(typesOf(all).at(-1)).toBe('done');
    const rid = head[1]!.data.responseId;
    // Only one response was made: the reconnect resumed, it did not start new work.
    expect(await ctx.count('responses')).toBe(1);
    const again = await readFrames(await ctx.call('chat/resumeStream', { responseId: rid, after: 5 }, ctx.users[0]));
    expect(seqs(again)[0]).toBe(6);
    expect(again).toEqual(all.slice(5));
    const byId = await readFrames(await ctx.call('chat/resumeStream', { responseId: rid, after: `${rid}:${all.length - 1}` }, ctx.users[0]));
    expect(typesOf(byId)).toEqual(['done']);
    // Another response's frame id is no position in this one: everything is replayed.
    expect(await readFrames(await ctx.call('chat/resumeStream', { responseId: rid, after: `someother:${all.length - 1}` }, ctx.users[0]))).toEqual(all);
    const byHeader = await readFrames(await ctx.call('chat/resumeStream', { responseId: rid, after: 2 }, { 'x-api-key': ctx.users[0]!.key, 'last-event-id': `${rid}:${all.length - 1}` }));
    expect(typesOf(byHeader)).toEqual(['done']);
    expect((await ctx.json('chat/resumeStream', { responseId: rid }, ctx.users[1])).body).toEqual(SPEC_ERRORS[404]);
    const unknown = await readFrames(await research(ctx, { message: 'x' }, { 'last-event-id': 'nope:3' }));
    expect(typesOf(unknown)).toEqual(['error']);
    // Once retention has pruned the events, a resume still learns how the response ended, under
    // the id its last event had; one that already saw that event gets nothing.
    expect(await ctx.store.write((tx) => pruneResponseEvents(tx, Date.now() + 1))).toBe(all.length);
    const pruned = await readFrames(await ctx.call('chat/resumeStream', { responseId: rid, after: 5 }, ctx.users[0]));
    expect(pruned).toEqual([all.at(-1)!]);
    expect(await readFrames(await ctx.call('chat/resumeStream', { responseId: rid, after: all.length }, ctx.users[0]))).toEqual([]);
  });

  test('a long backlog replays whole, in order, in several chunks', async () => {
    const ctx = await createTestContext({ users, config: responsesConfig() });
    openai.responsesScript = () => textEvents('z'.repeat(2500), 2500);
    const live = await readFrames(await research(ctx, { message: 'x' }));
    const replay = await readFrames(await ctx.call('chat/resumeStream', { responseId: live[1]!.data.responseId }, ctx.users[0]));
    expect(replay).toEqual(live);
    expect(replay.length).toBe(2504); // conversation.created, response.created, content_part.added, 2500 deltas, done
  });

  test('resume across a server restart: the upstream background response is retrieved and replayed up to the cursor', async () => {
    const full = 'The quick brown fox jumps over the lazy dog, twice.';
    openai.responsesScript = () => textEvents(full, full.length);
    openai.eventDelayMs = 4;
    const ctx1 = await createTestContext({ users, config: responsesConfig(), durable: true });
    const key = ctx1.users[0]!.key;
    const reader = new SseReader(await ctx1.call('chat/streamDeepResearch', { message: 'x' }, { 'x-api-key': key }));
    const head = await reader.all(10);
    await reader.close();
    await ctx1.deps.tasks.shutdown(); // the process "dies"
    const rid = head[1]!.data.responseId;
    expect((await ctx1.store.read((tx) => findResponseById(tx, rid)))!.status).toBe('in_progress');
    await ctx1.close();

    const ctx2 = await createTestContext({ config: responsesConfig(), sameDatabaseAs: ctx1 });
    expect(await resumeInterruptedResponses(ctx2.deps)).toEqual({ resumed: 1, failed: 0 });
    const rest = await readFrames(await ctx2.call('chat/streamDeepResearch', { message: 'x' }, { 'x-api-key': key, 'last-event-id': head.at(-1)!.id! }));
    const all = [...head, ...rest];
    expect(seqs(all)).toEqual(all.map((_, i) => i + 1));
    expect(text(all)).toBe(full);
    expect(typesOf(all).at(-1)).toBe('done');
    const { upstreamId } = (await ctx2.store.read((tx) => findResponseById(tx, rid)))!;
    expect(openai.requests.some((r) => r.path === `GET /v1/responses/${upstreamId}?stream=true`)).toBe(true);
    const row = (await ctx2.store.read((tx) => findResponseById(tx, rid)))!;
    expect(row.status).toBe('completed');
    expect((await ctx2.store.read((tx) => listItems(tx, row.conversationId))).at(-1)!.content).toBe(full);
    await ctx2.close();
  });

  /** A research turn on a database that outlives its context (the "process" restarts on it), read until its canvas was announced (a tool round ran). */
  async function researchUntilCanvas() {
    const postsBefore = postCount();
    const ctx1 = await createTestContext({ users, config: responsesConfig(), durable: true });
    const key = ctx1.users[0]!.key;
    const reader = new SseReader(await ctx1.call('chat/streamDeepResearch', { message: 'Plan my trip' }, { 'x-api-key': key }));
    const head: Frame[] = [];
    while (!head.some((f) => f.data.type === 'widget.created')) head.push(...(await reader.all(1)));
    const rid = head[1]!.data.responseId as string;
    return { ctx1, key, reader, head, rid, firstUpstream: (await ctx1.store.read((tx) => findResponseById(tx, rid)))!.upstreamId, postsBefore };
  }

  /**
   * Until the fake has been asked for the tool round's follow-up (its second response): on a
   * loaded machine the restart could otherwise come before that request, and the scripted turns
   * would shift by one in the restarted context.
   */
  async function followUpRequested(postsBefore: number) {
    const posts = () => postCount() - postsBefore;
    for (let i = 0; i < 500 && posts() < 2; i++) await Bun.sleep(5);
    expect(posts()).toBe(2);
  }

  /**
   * Round one asks for a canvas; the follow-up says its first word 1.5 s after it was created:
   * a restart before that never stores its upstream id, and the resumed turn replays round one.
   * (A wide margin: on a loaded machine closing the first context takes a while.)
   */
  function canvasThenLateFollowUp() {
    let turn = 0;
    openai.responsesScript = () => {
      if (turn++ === 0) return functionCallEvents('call_9', 'generate_canvas', { topic: 'Trip', goal: 'Pack', content: '# Plan' });
      if (turn === 2) openai.eventDelayMs = 1500;
      return textEvents('Made a canvas.', 1);
    };
    openai.eventDelayMs = 20;
  }

  test('a restart while a tool round\'s follow-up is thinking resumes that follow-up: the tool is not run twice', async () => {
    let turn = 0;
    // The follow-up "thinks" first: events that say nothing to the client, 0.6 s of them.
    const thinking = Array.from({ length: 6 }, () => ({ type: 'response.keepalive' }));
    openai.responsesScript = () =>
      turn++ === 0
        ? functionCallEvents('call_7', 'generate_canvas', { topic: 'Trip', goal: 'Pack', content: '# Plan' })
        : [...thinking, ...textEvents('Made a canvas.', 1)];
    openai.eventDelayMs = 100;
    const { ctx1, key, reader, head, rid, firstUpstream } = await researchUntilCanvas();
    // The follow-up has started upstream but said nothing yet: its id must already be stored.
    for (let i = 0; i < 100 && (await ctx1.store.read((tx) => findResponseById(tx, rid)))!.upstreamId === firstUpstream; i++) await Bun.sleep(5);
    const followUp = (await ctx1.store.read((tx) => findResponseById(tx, rid)))!.upstreamId;
    expect(followUp).not.toBe(firstUpstream);
    await reader.close();
    await ctx1.deps.tasks.shutdown(); // the process "dies" before the follow-up's first word
    await ctx1.close();

    openai.eventDelayMs = 0;
    const posts = () => openai.requests.filter((r) => r.path.startsWith('POST /v1/responses')).length;
    const postsBefore = posts();
    const ctx2 = await createTestContext({ config: responsesConfig(), sameDatabaseAs: ctx1 });
    expect(await resumeInterruptedResponses(ctx2.deps)).toEqual({ resumed: 1, failed: 0 });
    const rest = await readFrames(await ctx2.call('chat/streamDeepResearch', { message: 'x' }, { 'x-api-key': key, 'last-event-id': head.at(-1)!.id! }));
    expect(typesOf(rest)).not.toContain('widget.created');
    expect(typesOf(rest)).not.toContain('generate_canvas.in_progress');
    expect(text(rest)).toBe('Made a canvas.');
    expect(typesOf(rest).at(-1)).toBe('done');
    expect(posts()).toBe(postsBefore); // no second follow-up was started
    expect(await canvases(ctx2)).toBe(1);
    const answer = (await itemsOfResponse(ctx2, rid)).at(-1)!;
    expect((answer.parts as { type: string }[]).map((p) => p.type)).toEqual(['widget.created', 'response.model']);
    await ctx2.close();
  }, 30_000);

  test('a restart before a tool round\'s follow-up said anything: the stored tool output is reused, the tool is not run again', async () => {
    canvasThenLateFollowUp();
    const { ctx1, key, reader, head, rid, firstUpstream, postsBefore } = await researchUntilCanvas();
    await followUpRequested(postsBefore);
    await reader.close();
    await ctx1.deps.tasks.shutdown(); // the process "dies" while the follow-up is being created
    expect((await ctx1.store.read((tx) => findResponseById(tx, rid)))!.upstreamId).toBe(firstUpstream);
    expect(await ctx1.count('response_tool_outputs')).toBe(1);
    await ctx1.close();

    openai.eventDelayMs = 0;
    const ctx2 = await createTestContext({ config: responsesConfig(), sameDatabaseAs: ctx1 });
    expect(await resumeInterruptedResponses(ctx2.deps)).toEqual({ resumed: 1, failed: 0 });
    const rest = await readFrames(await ctx2.call('chat/streamDeepResearch', { message: 'x' }, { 'x-api-key': key, 'last-event-id': head.at(-1)!.id! }));
    const all = [...head, ...rest];
    expect(typesOf(all).filter((t) => t === 'widget.created')).toHaveLength(1);
    expect(typesOf(all).filter((t) => t === 'generate_canvas.in_progress')).toHaveLength(1);
    expect(text(rest)).toBe('Made a canvas.');
    expect(typesOf(rest).at(-1)).toBe('done');
    expect(await canvases(ctx2)).toBe(1);
    // The stored answer keeps the canvas made before the restart, once.
    const answer = (await itemsOfResponse(ctx2, rid)).at(-1)!;
    expect([answer.content, (answer.parts as { type: string }[]).map((p) => p.type)]).toEqual(['Made a canvas.', ['widget.created', 'response.model']]);
    // Finished: nothing will resume it, so its tool output is gone.
    expect(await ctx2.count('response_tool_outputs')).toBe(0);
    await ctx2.close();
  }, 30_000);

  test('a restart after the canvas was stored but before its events were: the call runs again and finds that canvas', async () => {
    canvasThenLateFollowUp();
    const { ctx1, key, reader, head, rid, postsBefore } = await researchUntilCanvas();
    await followUpRequested(postsBefore);
    await reader.close();
    await ctx1.deps.tasks.shutdown();
    // The crash lands in the gap: the widget row committed, the call's events and output did not.
    const inProgress = head.find((f) => f.data.type === 'generate_canvas.in_progress')!;
    const seq = Number(inProgress.id!.split(':').at(-1));
    await ctx1.query(sql`DELETE FROM response_events WHERE response_id = ${rid} AND seq >= ${seq}`);
    await ctx1.query(sql`DELETE FROM response_tool_outputs WHERE response_id = ${rid}`);
    const stored = await ctx1.query<{ id: string }>(sql`SELECT id FROM widgets WHERE widget_type = 'canvas'`);
    expect(stored).toHaveLength(1);
    await ctx1.close();

    openai.eventDelayMs = 0;
    const ctx2 = await createTestContext({ config: responsesConfig(), sameDatabaseAs: ctx1 });
    expect(await resumeInterruptedResponses(ctx2.deps)).toEqual({ resumed: 1, failed: 0 });
    const seen = head.slice(0, head.indexOf(inProgress));
    const rest = await readFrames(await ctx2.call('chat/streamDeepResearch', { message: 'x' }, { 'x-api-key': key, 'last-event-id': seen.at(-1)!.id! }));
    const created = rest.filter((f) => f.data.type === 'widget.created');
    expect(created.map((f) => f.data.widgetId)).toEqual([stored[0]!.id]);
    expect(text(rest)).toBe('Made a canvas.');
    expect(await canvases(ctx2)).toBe(1);
    await ctx2.close();
  }, 30_000);

  test('a stored tool output answers only the round that asked: a later round repeating the call id runs its tool', async () => {
    let turn = 0;
    // Some OpenAI-compatible servers number calls per response: every round asks for `call_1`.
    openai.responsesScript = () => {
      turn++;
      if (turn === 1) return functionCallEvents('call_1', 'generate_canvas', { topic: 'Packing', content: '# A' });
      if (turn === 2) openai.eventDelayMs = 1500; // the follow-up the restart cuts off (a wide margin)
      if (turn === 3) return functionCallEvents('call_1', 'generate_canvas', { topic: 'Route', content: '# B' });
      return textEvents('Two canvases.', 1);
    };
    openai.eventDelayMs = 20;
    const { ctx1, key, reader, head, rid, firstUpstream, postsBefore } = await researchUntilCanvas();
    await followUpRequested(postsBefore);
    await reader.close();
    await ctx1.deps.tasks.shutdown();
    expect((await ctx1.store.read((tx) => findResponseById(tx, rid)))!.upstreamId).toBe(firstUpstream); // the restart came before the follow-up spoke
    await ctx1.close();

    openai.eventDelayMs = 0;
    const ctx2 = await createTestContext({ config: responsesConfig(), sameDatabaseAs: ctx1 });
    expect(await resumeInterruptedResponses(ctx2.deps)).toEqual({ resumed: 1, failed: 0 });
    const rest = await readFrames(await ctx2.call('chat/streamDeepResearch', { message: 'x' }, { 'x-api-key': key, 'last-event-id': head.at(-1)!.id! }));
    expect(typesOf([...head, ...rest]).filter((t) => t === 'widget.created')).toHaveLength(2);
    expect(text(rest)).toBe('Two canvases.');
    const titles = await ctx2.query<{ title: string }>(sql`SELECT title FROM widgets WHERE widget_type = 'canvas' ORDER BY created_at`);
    expect(titles.map((t) => t.title)).toEqual(['Packing', 'Route']);
    await ctx2.close();
  }, 30_000);

  /** A chat turn (a provider that cannot resume) cut off by a stopped server after its first frames: the context it ran in, closed. */
  async function interruptedChatTurn() {
    openai.chatScript = () => ({ deltas: Array.from({ length: 50 }, (_, i) => ({ content: `w${i} ` })) });
    openai.eventDelayMs = 4;
    const ctx = await createTestContext({ users, config: chatConfig(), durable: true });
    const key = ctx.users[0]!.key;
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'x' }, { 'x-api-key': key }));
    const head = await reader.all(5);
    await reader.close();
    await ctx.deps.tasks.shutdown();
    await ctx.close();
    return { ctx1: ctx, key, head };
  }

  test('restart with a provider that cannot resume: failed with an error event', async () => {
    const { ctx1, key, head } = await interruptedChatTurn();
    const ctx2 = await createTestContext({ config: chatConfig(), sameDatabaseAs: ctx1 });
    expect(await resumeInterruptedResponses(ctx2.deps)).toEqual({ resumed: 0, failed: 1 });
    const rest = await readFrames(await ctx2.call('chat/resumeStream', { responseId: head[1]!.data.responseId, after: head.at(-1)!.id! }, { 'x-api-key': key }));
    expect(rest.at(-1)!.data).toEqual({ type: 'error', message: RESTART_MESSAGE });
    expect(seqs([...head, ...rest])).toEqual([...head, ...rest].map((_, i) => i + 1));
    // The partial answer the user saw is kept, as when a turn fails on its own.
    const shown = text([...head, ...rest]);
    expect(shown.length).toBeGreaterThan(0);
    const items = await itemsOfResponse(ctx2, head[1]!.data.responseId);
    expect(items.map((i) => [i.role, i.content])).toEqual([['user', 'x'], ['assistant', shown]]);
    await ctx2.close();
  });

  test('cancelling a turn no task owns (left running by a previous process) ends it, keeping what it said', async () => {
    const { ctx1, key, head } = await interruptedChatTurn();
    // Started without the start-up pass: the row is still in progress and no task owns it.
    const ctx2 = await createTestContext({ config: chatConfig(), sameDatabaseAs: ctx1 });
    const rid = head[1]!.data.responseId as string;
    expect((await ctx2.json('chat/cancelResponse', { responseId: rid }, { 'x-api-key': key })).body).toEqual({ success: true, status: 'cancelled' });
    const all = await readFrames(await ctx2.call('chat/resumeStream', { responseId: rid }, { 'x-api-key': key }));
    expect(all.at(-1)!.data).toEqual({ type: 'error', message: 'The response was cancelled.' });
    const items = await itemsOfResponse(ctx2, rid);
    expect(items.map((i) => [i.role, i.content])).toEqual([['user', 'x'], ['assistant', text(all)]]);
    expect(text(all).length).toBeGreaterThan(0);
    await ctx2.close();
  });

  test('chat/cancelResponse stops the task and the upstream response', async () => {
    const ctx = await createTestContext({ users, config: responsesConfig() });
    openai.responsesScript = () => textEvents('x'.repeat(200), 200);
    openai.eventDelayMs = 5;
    const reader = new SseReader(await research(ctx, { message: 'x' }));
    const head = await reader.all(4);
    const rid = head[1]!.data.responseId;
    expect((await ctx.json('chat/cancelResponse', { responseId: rid }, ctx.users[1])).body).toEqual(SPEC_ERRORS[404]);
    const { body } = await ctx.json('chat/cancelResponse', { responseId: rid }, ctx.users[0]);
    expect(body).toEqual({ success: true, status: 'cancelled' });
    const rest = await reader.all();
    expect(rest.at(-1)!.data).toEqual({ type: 'error', message: 'The response was cancelled.' });
    expect(openai.cancelled).toContain((await ctx.store.read((tx) => findResponseById(tx, rid)))!.upstreamId!);
    expect((await ctx.json('chat/cancelResponse', { responseId: rid }, ctx.users[0])).body).toEqual({ success: false, status: 'cancelled' });
  });

  /** A research turn answering slowly, its first frames read: what the truncate tests cut into. */
  async function slowTurn() {
    const ctx = await createTestContext({ users, config: responsesConfig() });
    openai.responsesScript = () => textEvents('x'.repeat(200), 200);
    openai.eventDelayMs = 5;
    const reader = new SseReader(await research(ctx, { message: 'first question' }));
    const head = await reader.all(4);
    const conversationId = head[0]!.data.conversationId as string;
    const items = await ctx.store.read((tx) => listItems(tx, conversationId));
    expect(items.map((i) => i.role)).toEqual(['user']);
    return { ctx, reader, conversationId, rid: head[1]!.data.responseId as string, question: items[0]! };
  }

  test('truncating a conversation cancels its running turn first: nothing is written after the cut', async () => {
    const { ctx, reader, conversationId, rid, question } = await slowTurn();
    const cut = await ctx.json('chat/truncateConversationFromItem', { conversationId, fromItemId: question.id }, ctx.users[0]);
    // The question, and the partial answer the cancelled turn kept: all of it is after the cut.
    expect(cut.body).toEqual({ success: true, deletedCount: expect.any(Number) });
    expect(cut.body.deletedCount).toBeGreaterThanOrEqual(1);
    const rest = await reader.all();
    expect(rest.at(-1)!.data).toEqual({ type: 'error', message: 'The response was cancelled.' });
    expect((await ctx.store.read((tx) => findResponseById(tx, rid)))!.status).toBe('cancelled');
    await Bun.sleep(50);
    expect(await ctx.store.read((tx) => listItems(tx, conversationId))).toEqual([]);
  });

  test('a message sent while a truncate waits for the cancel never leaves an answer without its question', async () => {
    const { ctx, reader, conversationId, question } = await slowTurn();
    const cutting = ctx.json('chat/truncateConversationFromItem', { conversationId, fromItemId: question.id }, ctx.users[0]);
    // The edited message, sent without waiting for the truncate's answer.
    openai.responsesScript = () => textEvents('new answer', 2);
    openai.eventDelayMs = 20;
    const sending = research(ctx, { conversationId, message: 'edited question' });
    expect((await cutting).body.success).toBe(true);
    await readFrames(await sending);
    await reader.all();
    await Bun.sleep(50);
    const items = await ctx.store.read((tx) => listItems(tx, conversationId));
    expect(items[0]?.role ?? 'user').toBe('user');
    expect(items.filter((i) => i.role === 'user').length).toBeGreaterThanOrEqual(items.filter((i) => i.role === 'assistant').length);
  });

  test('a turn that completes while a truncate cancels an earlier one stays completed, its last event numbered right', async () => {
    const { ctx, conversationId } = await slowTurn();
    // A second turn, short: it completes while the truncate waits for the first one's slow cancel.
    openai.responsesScript = () => textEvents('short answer', 4);
    openai.cancelDelayMs = 2000; // the second turn (~50 ms of events) completes well inside it
    const second = new SseReader(await research(ctx, { message: 'second question', conversationId }));
    const rid2 = (await second.all(1))[0]!.data.responseId as string;
    const [question2] = (await ctx.store.read((tx) => listItems(tx, conversationId))).filter((i) => i.content === 'second question');
    expect((await ctx.json('chat/truncateConversationFromItem', { conversationId, fromItemId: question2!.id }, ctx.users[0])).body.success).toBe(true);
    expect((await second.all()).at(-1)!.data.type).toBe('done');
    const row = (await ctx.store.read((tx) => findResponseById(tx, rid2)))!;
    expect(row.status).toBe('completed');
    const stored = await lastStoredSeq(ctx, rid2);
    expect(row.lastSeq).toBe(stored);
    expect((await ctx.json('chat/cancelResponse', { responseId: rid2 }, ctx.users[0])).body).toEqual({ success: false, status: 'completed' });
  }, 15_000);

  test('concurrency caps: 429 envelope before the stream, per user and overall', async () => {
    const ctx = await createTestContext({ users: [...users, { email: 'cy@example.org' }], config: responsesConfig({ researchMaxPerUser: 1, researchMaxTotal: 2 }) });
    openai.responsesScript = () => textEvents('y'.repeat(100), 100);
    openai.eventDelayMs = 5;
    const a = new SseReader(await research(ctx, { message: 'x' }));
    await a.all(2);
    const over = await research(ctx, { message: 'x' });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('10');
    expect(await over.json()).toEqual({ defined: false, code: 'TOO_MANY_REQUESTS', status: 429, message: 'Too Many Requests', data: {} });
    const b = new SseReader(await research(ctx, { message: 'x' }, {}, ctx.users[1]));
    await b.all(2);
    expect((await research(ctx, { message: 'x' }, {}, ctx.users[2])).status).toBe(429);
    // Disconnecting does not free a slot: the task keeps running in the background.
    await a.close();
    expect((await research(ctx, { message: 'x' })).status).toBe(429);
    await ctx.deps.tasks.shutdown();
  });

  test('a client that leaves a quiet stream: its subscription goes at once, not at the next tick', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() }); // ticks every 5 s
    openai.chatScript = () => ({ pauseMs: 3000, deltas: [{ content: 'slow' }] });
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => ctx.app.handle(r) });
    try {
      const abort = new AbortController();
      const res = await fetch(`http://127.0.0.1:${server.port}/api/chat/streamDeepResearch`, {
        method: 'POST',
        headers: { 'x-api-key': ctx.users[0]!.key, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'x' }),
        signal: abort.signal,
      });
      const reader = new SseReader(res);
      const first = await reader.all(2);
      const topic = responseTopic(first[1]!.data.responseId);
      const rest = reader.all().catch(() => []); // keeps reading until the abort
      await Bun.sleep(200);
      expect(ctx.deps.bus.listenerCount(topic)).toBe(1);
      abort.abort();
      await rest;
      for (let i = 0; i < 50 && ctx.deps.bus.listenerCount(topic); i++) await Bun.sleep(10);
      expect(ctx.deps.bus.listenerCount(topic)).toBe(0);
      expect(ctx.deps.heartbeats.size).toBe(0);
    } finally {
      server.stop(true);
      await ctx.deps.tasks.shutdown();
    }
  }, 10_000);

  test('at shutdown a quiet stream ends and leaves the bus and the ticker', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    openai.chatScript = () => ({ pauseMs: 3000, deltas: [{ content: 'slow' }] });
    const reader = new SseReader(await research(ctx, { message: 'x' }));
    const first = await reader.all(2);
    const topic = responseTopic(first[1]!.data.responseId);
    // The client keeps reading: the stream waits for its next event (3 s away), not for the client.
    const rest = reader.all();
    await Bun.sleep(300);
    expect(ctx.deps.bus.listenerCount(topic)).toBe(1);
    await ctx.deps.lifecycle.shutdown(1000);
    await rest;
    for (let i = 0; i < 50 && ctx.deps.bus.listenerCount(topic); i++) await Bun.sleep(10);
    expect(ctx.deps.bus.listenerCount(topic)).toBe(0);
    expect(ctx.deps.heartbeats.size).toBe(0);
    await ctx.deps.tasks.shutdown();
  }, 10_000);

  test('keepalive frames (no id) and comment lines while quiet, on the shared heartbeat ticker', async () => {
    // Ticks every second: the first after the opening only marks the stream quiet, the second
    // (quiet 1 s < 2 s) sends a comment line, the third (quiet 2 s) a keepalive frame, the fourth
    // (1 s after it) a comment line again.
    const ctx = await createTestContext({ users, config: chatConfig({ streamKeepaliveS: 2, sseHeartbeatSeconds: 1 }) });
    openai.chatScript = () => ({ pauseMs: 4000, deltas: [{ content: 'slow' }] });
    const reader = new SseReader(await research(ctx, { message: 'x' }));
    const first = await reader.next();
    // The stream joins the ticker once the replay is sent and the row read (a round trip on PostgreSQL).
    await until(() => ctx.deps.heartbeats.size === 1, 'the stream on the ticker');
    const frames = [first!, ...(await reader.all())];
    const keepalives = frames.filter((f) => f.data.type === 'keepalive');
    expect(keepalives.length).toBeGreaterThanOrEqual(1);
    expect(keepalives.every((f) => f.id === undefined)).toBe(true);
    expect(reader.commentLines).toContain(': ping');
    // The ended stream left the ticker and the bus.
    expect(ctx.deps.heartbeats.size).toBe(0);
    expect(ctx.deps.bus.listenerCount(responseTopic(frames[1]!.data.responseId))).toBe(0);
    expect(typesOf(frames.filter((f) => f.id)).at(-1)).toBe('done');
    const rid = frames[1]!.data.responseId;
    // Keepalives are not persisted: a replay has none.
    const replay = await readFrames(await ctx.call('chat/resumeStream', { responseId: rid }, ctx.users[0]));
    expect(typesOf(replay)).not.toContain('keepalive');
  }, 10_000);

  test('generate_canvas tool → generate_canvas.in_progress, a stored canvas widget, widget.created', async () => {
    const ctx = await createTestContext({ users, config: responsesConfig() });
    let turn = 0;
    openai.responsesScript = () =>
      turn++ === 0 ? functionCallEvents('call_9', 'generate_canvas', { topic: 'Trip plan', goal: 'Pack', content: '# Plan' }) : textEvents('Made a canvas.', 1);
    const frames = await readFrames(await research(ctx, { message: 'Plan my trip' }));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'generate_canvas.in_progress', 'widget.created', 'content_part.added', 'text.delta', 'done']);
    expect(frames[2]!.data).toEqual({ type: 'generate_canvas.in_progress', itemId: 'call_9', topic: 'Trip plan', goal: 'Pack' });
    const w = frames[3]!.data;
    expect(w).toMatchObject({ widgetType: 'canvas', responseId: frames[1]!.data.responseId });
    expect(await ctx.store.read((tx) => findWidgetById(tx, w.widgetId))).toMatchObject({ title: 'Trip plan', document: { topic: 'Trip plan', goal: 'Pack', content: '# Plan' } });
  });
});

describe('chat/stream (openai-chat)', () => {
  test('cancelling a research turn while it reads a slow page stops it at once, not after the page', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    openai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'Report.' }] } : { deltas: [{ content: '["slow topic"]' }] });
    searx.pageDelayMs = 8000;
    const reader = new SseReader(await research(ctx, { message: 'x' }));
    const head: Frame[] = [];
    while (!head.some((f) => f.data.type === 'web_search.completed')) head.push(...(await reader.all(1)));
    await Bun.sleep(200); // reading the page now
    const started = Date.now();
    const { body } = await ctx.json('chat/cancelResponse', { responseId: head[1]!.data.responseId }, ctx.users[0]);
    expect(body).toEqual({ success: true, status: 'cancelled' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await reader.all()).at(-1)!.data).toEqual({ type: 'error', message: 'The response was cancelled.' });
  }, 20_000);

  test('when the event log refuses a response, the row still ends with its answer, and followers are told how it ended', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ users, log, config: chatConfig({ sseHeartbeatSeconds: 1 }) });
    openai.chatScript = () => ({ pauseMs: 300, deltas: [{ content: 'part one ' }, { content: 'part two' }] });
    const reader = new SseReader(await ctx.call('chat/stream', { message: 'x' }, ctx.users[0]));
    const opening = await reader.all(2);
    const rid = opening[1]!.data.responseId as string;
    // From now on every event write fails, as on a disk that filled up.
    (ctx.deps.events as unknown as { writeIn: () => Generator }).writeIn = function* () {
      throw new Error('database or disk is full');
    };
    const rest = await reader.all();
    // The model did answer: the turn is completed and its answer stored, only its events are missing.
    const row = (await ctx.store.read((tx) => findResponseById(tx, rid)))!;
    expect(row.status).toBe('completed');
    const answer = (await ctx.store.read((tx) => listItems(tx, row.conversationId))).at(-1)!;
    expect([answer.role, answer.content]).toEqual(['assistant', 'part one part two']);
    expect(lines.some((l) => l.includes('the last event of a response could not be stored'))).toBe(true);
    // The follower is still told how it ended, under a number after every event the turn made.
    expect(rest.at(-1)).toEqual({ id: `${rid}:${row.lastSeq}`, event: 'message', data: { type: 'done' } });
    expect(reader.done).toBe(true);
    const storedLast = await lastStoredSeq(ctx, rid);
    expect(row.lastSeq).toBeGreaterThan(Math.max(storedLast, ...rest.slice(0, -1).map((f) => Number(f.id!.split(':')[1]))));
    // So is a client resuming later (the row tells it), and one that already saw that end gets nothing.
    const replay = await readFrames(await ctx.call('chat/resumeStream', { responseId: rid }, ctx.users[0]));
    expect(replay.at(-1)).toEqual(rest.at(-1)!);
    expect(await readFrames(await ctx.call('chat/resumeStream', { responseId: rid, after: row.lastSeq }, ctx.users[0]))).toEqual([]);
  }, 10_000);

  // Asks SQLite's one connection whether it is inside a transaction when events are published.
  sqliteOnly('followers get events only once they are committed, the final `done` included', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    const inTransaction: boolean[] = [];
    const publish = ctx.deps.bus.publish.bind(ctx.deps.bus);
    ctx.deps.bus.publish = (topic, event) => {
      if (topic.startsWith('response:')) inTransaction.push(ctx.db.$client.inTransaction);
      publish(topic, event);
    };
    openai.chatScript = () => ({ pauseMs: 50, deltas: [{ content: 'a' }, { content: 'b' }] });
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'x' }, ctx.users[0]));
    expect(typesOf(frames).at(-1)).toBe('done');
    expect(inTransaction.length).toBeGreaterThan(0);
    expect(inTransaction).not.toContain(true);
  });

  test('event order with reasoning_content; canvas and history tools on the chat provider', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    openai.chatScript = () => ({ deltas: [{ reasoning_content: 'Let me think.' }, { content: 'Zebras migrate ' }, { content: 'every year.' }] });
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Tell me about zebra migration' }, ctx.users[0]));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'reasoning_text.delta', 'reasoning_text.done', 'content_part.added', 'text.delta', 'text.delta', 'done']);

    let turn = 0;
    openai.chatScript = () =>
      turn++ === 0
        ? { deltas: [{ tool_calls: [{ index: 0, id: 'h1', type: 'function', function: { name: 'search_history', arguments: '{"query":"zebra"}' } }, { index: 1, id: 'c1', type: 'function', function: { name: 'generate_canvas', arguments: '{"topic":"Zebras","content":"..."}' } }] }], finish_reason: 'tool_calls' }
        : { deltas: [{ content: 'Found it.' }] };
    const second = await readFrames(await ctx.call('chat/stream', { message: 'What did we say before?' }, ctx.users[0]));
    expect(typesOf(second)).toEqual([
      'conversation.created', 'response.created', 'history.in_progress', 'history.completed', 'generate_canvas.in_progress', 'widget.created', 'content_part.added', 'text.delta', 'done',
    ]);
    expect(second[2]!.data).toEqual({ type: 'history.in_progress', itemId: 'h1', query: 'zebra' });
    expect(second[3]!.data.results.map((r: any) => r.text).sort()).toEqual(['Tell me about zebra migration']);
    // Another user's history is never searched.
    turn = 0;
    const bobs = await readFrames(await ctx.call('chat/stream', { message: 'x' }, ctx.users[1]));
    expect(bobs[3]!.data).toEqual({ type: 'history.completed', results: [] });
  });

  test('upstream failure → error event; Last-Event-ID resumes chat/stream too', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    openai.chatScript = () => ({ fail: 500 });
    const failed = await readFrames(await ctx.call('chat/stream', { message: 'x' }, ctx.users[0]));
    expect(typesOf(failed)).toEqual(['conversation.created', 'response.created', 'error']);
    expect(failed[2]!.data.message).toContain('HTTP 500');
    openai.chatScript = () => ({ deltas: [{ content: 'a' }, { content: 'b' }, { content: 'c' }] });
    const all = await readFrames(await ctx.call('chat/stream', { message: 'x' }, ctx.users[0]));
    const rest = await readFrames(await ctx.call('chat/stream', { message: 'x' }, { 'x-api-key': ctx.users[0]!.key, 'last-event-id': all[3]!.id! }));
    expect(rest).toEqual(all.slice(4));
  });

  test('study mode changes the system prompt of chat turns', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    openai.chatScript = () => ({ deltas: [{ content: 'ok' }] });
    const first = await readFrames(await ctx.call('chat/stream', { message: 'x' }, ctx.users[0]));
    const conversationId = first[0]!.data.conversationId;
    const system = () => openai.requests.findLast((r) => r.path === 'POST /v1/chat/completions')!.body.messages[0];
    expect(system()).toMatchObject({ role: 'system', content: expect.not.stringContaining('study mode') });
    await ctx.json('chat/setConversationStudyMode', { conversationId, studyMode: true }, ctx.users[0]);
    await readFrames(await ctx.call('chat/stream', { message: 'y', conversationId }, ctx.users[0]));
    expect(system().content).toContain('study mode');
  });

  test('deep research through the chat provider: search events, then the report', async () => {
    const ctx = await createTestContext({ users, config: chatConfig() });
    openai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'Report [1].' }] } : { deltas: [{ content: '["octopus hearts"]' }] });
    const frames = await readFrames(await research(ctx, { message: 'How many hearts has an octopus?' }));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'web_search.in_progress', 'web_search.completed', 'web_page.read', 'content_part.added', 'text.delta', 'done']);
    expect(frames[2]!.data).toMatchObject({ query: 'octopus hearts' });
    // The page the report's [1] points at; kept with the stored answer for a reloaded conversation.
    const read = frames[4]!.data as { n: number; url: string };
    expect(read).toMatchObject({ n: 1, url: (frames[3]!.data as any).results[0].link });
    const conversationId = frames[0]!.data.conversationId as string;
    const got = await ctx.json('chat/getConversation', { conversationId }, ctx.users[0]);
    expect(got.body.items.at(-1).parts.map((p: { type: string }) => p.type)).toEqual(['web_search.completed', 'web_page.read', 'response.model']);
  });
});
