/**
 * Memories in AI turns, end to end through HTTP with the fake OpenAI server: what the model is
 * given (the memories in the system message, the memory tools) with `enableMemories` on and off,
 * what a scripted tool call does, which `memory.*` events the stream shows with
 * `showMemoryToolOutput`, and how the context budget bounds the memories.
 */
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, until, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf, type Frame } from './sse';
import { functionCallEvents, startFakeOpenAI, textEvents, toolCallsThenAnswer } from './fakes/openai';
import { groupWith, send } from './group-helpers';
import type { Config } from '../src/config';
import { estimateTokens } from '../src/ai/count-tokens';
import { MEMORY_HEADING } from '../src/memory/memory.prompt';
import { MEMORY_OFF } from '../src/memory/memory.tools';
import { MEMORY_MAX_CHARS } from '../src/memory/memory.rules';

setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

const MEMORY_TOOLS = ['save_memory', 'update_memory', 'forget_memory'];

beforeEach(() => {
  openai.requests.length = 0;
  openai.gets = {};
  openai.eventDelayMs = 0;
  openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }] });
  openai.responsesScript = () => textEvents('Fine.');
});

const chatConfig = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', researchModel: 'small', rateLimitAi: { capacity: 1000, perMs: 1000 }, ...extra,
});
const responsesConfig: Partial<Config> = { aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test', rateLimitAi: { capacity: 1000, perMs: 1000 } };

async function setup(config: Partial<Config> = chatConfig()): Promise<{ ctx: TestContext; ann: TestUser; bob: TestUser }> {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }], config });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

const prefs = (ctx: TestContext, as: TestUser, p: { enableMemories?: boolean; showMemoryToolOutput?: boolean }) => ctx.json('preferences/update', p, as);
const remember = async (ctx: TestContext, as: TestUser, content: string) => (await ctx.json('memories/addMemory', { content }, as)).body;
const memoriesOf = async (ctx: TestContext, as: TestUser) => (await ctx.json('memories/listMemories', {}, as)).body.memories as { id: string; content: string }[];
const chat = async (ctx: TestContext, as: TestUser, message: string, conversationId?: string) =>
  readFrames(await ctx.call('chat/stream', { message, ...(conversationId ? { conversationId } : {}) }, as));

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const systemOf = (body: any): string => (body.messages[0].role === 'system' ? body.messages[0].content : '');
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name ?? t.name ?? t.type);
const memoryLines = (system: string) => system.split('\n').filter((l) => l.startsWith('- ['));
const memoryFrames = (frames: Frame[]) => frames.filter((f) => String(f.data.type).startsWith('memory.')).map((f) => f.data);

/** A Chat Completions turn that calls the given tools, then one that answers. */
function callsThenAnswers(calls: { id: string; name: string; args: unknown }[], answer = 'Noted.') {
  openai.chatScript = toolCallsThenAnswer(calls, answer);
}

/** The tool messages of the request that followed the tool round. */
const toolOutputs = () => chatRequests().at(-1)!.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);

describe('memories on', () => {
  test('the model gets the memories and the memory tools; save_memory keeps a row and the stream shows memory.* events', async () => {
    const { ctx, ann, bob } = await setup();
    await prefs(ctx, ann, { enableMemories: true, showMemoryToolOutput: true });
    const cat = await remember(ctx, ann, 'Has a cat\ncalled Miso.');
    await remember(ctx, bob, 'Bob is a pilot.');
    callsThenAnswers([{ id: 'm1', name: 'save_memory', args: { content: '  Likes green tea. ' } }]);

    const frames = await chat(ctx, ann, 'I love green tea.');
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'memory.in_progress', 'memory.completed', 'content_part.added', 'text.delta', 'done']);
    const saved = (await memoriesOf(ctx, ann)).find((m) => m.content === 'Likes green tea.')!;
    expect(saved).toBeDefined();
    expect(memoryFrames(frames)).toEqual([
      { type: 'memory.in_progress', itemId: 'm1', action: 'save' },
      { type: 'memory.completed', itemId: 'm1', action: 'save', memoryId: saved.id, content: 'Likes green tea.' },
    ]);

    const [first] = chatRequests();
    const system = systemOf(first);
    expect(system).toContain(MEMORY_HEADING);
    // One line a memory, with the id the tools take; another user's never.
    expect(memoryLines(system)).toEqual([`- [${cat.id}] Has a cat called Miso.`]);
    expect(system).not.toContain('pilot');
    expect(toolNames(first)).toEqual(expect.arrayContaining(MEMORY_TOOLS));
    expect(toolOutputs()).toEqual([`Saved as memory ${saved.id}.`]);

    // The next turn has it, the most recently updated first.
    await chat(ctx, ann, 'Hello again.', frames[0]!.data.conversationId);
    expect(memoryLines(systemOf(chatRequests().at(-1)))).toEqual([`- [${saved.id}] Likes green tea.`, `- [${cat.id}] Has a cat called Miso.`]);

    // Bob's turn never sees Ann's memories; he has memories off, so no tools either.
    openai.requests.length = 0;
    await chat(ctx, bob, 'Hi');
    expect(systemOf(chatRequests()[0])).not.toContain(MEMORY_HEADING);
    expect(toolNames(chatRequests()[0])).not.toContain('save_memory');
  });

  test('with showMemoryToolOutput off the tool still runs, and the stream shows nothing of it', async () => {
    const { ctx, ann } = await setup();
    await prefs(ctx, ann, { enableMemories: true, showMemoryToolOutput: false });
    callsThenAnswers([{ id: 'm1', name: 'save_memory', args: { content: 'Is left-handed.' } }]);
    const frames = await chat(ctx, ann, 'I am left-handed.');
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'content_part.added', 'text.delta', 'done']);
    expect((await memoriesOf(ctx, ann)).map((m) => m.content)).toEqual(['Is left-handed.']);
    // No memory yet at the start of the turn: no section, but the tools.
    expect(systemOf(chatRequests()[0])).not.toContain(MEMORY_HEADING);
    expect(toolNames(chatRequests()[0])).toEqual(expect.arrayContaining(MEMORY_TOOLS));
  });

  test('update_memory and forget_memory act on the user\'s own memories only; refusals are told to the model and shown as memory.error', async () => {
    const { ctx, ann, bob } = await setup();
    await prefs(ctx, ann, { enableMemories: true, showMemoryToolOutput: true });
    const city = await remember(ctx, ann, 'Lives in Lyon.');
    const job = await remember(ctx, ann, 'Works as a baker.');
    const bobs = await remember(ctx, bob, 'Bob lives in Oslo.');
    callsThenAnswers([
      { id: 'u1', name: 'update_memory', args: { id: city.id, content: 'Lives in Paris.' } },
      { id: 'f1', name: 'forget_memory', args: { id: job.id } },
      { id: 'f2', name: 'forget_memory', args: { id: bobs.id } },
      { id: 'u2', name: 'update_memory', args: { id: bobs.id, content: 'Bob lives nowhere.' } },
      { id: 's1', name: 'save_memory', args: { content: 'x'.repeat(MEMORY_MAX_CHARS + 1) } },
      { id: 's2', name: 'save_memory', args: {} },
    ]);
    const frames = await chat(ctx, ann, 'I moved to Paris and quit baking.');
    expect(memoryFrames(frames)).toEqual([
      { type: 'memory.in_progress', itemId: 'u1', action: 'update' },
      { type: 'memory.completed', itemId: 'u1', action: 'update', memoryId: city.id, content: 'Lives in Paris.' },
      { type: 'memory.in_progress', itemId: 'f1', action: 'forget' },
      { type: 'memory.completed', itemId: 'f1', action: 'forget', memoryId: job.id, content: 'Works as a baker.' },
      { type: 'memory.in_progress', itemId: 'f2', action: 'forget' },
      { type: 'memory.error', itemId: 'f2', action: 'forget', error: expect.stringContaining('No memory has the id') },
      { type: 'memory.in_progress', itemId: 'u2', action: 'update' },
      { type: 'memory.error', itemId: 'u2', action: 'update', error: expect.stringContaining('No memory has the id') },
      { type: 'memory.in_progress', itemId: 's1', action: 'save' },
      { type: 'memory.error', itemId: 's1', action: 'save', error: expect.stringContaining(`at most ${MEMORY_MAX_CHARS} characters`) },
      { type: 'memory.in_progress', itemId: 's2', action: 'save' },
      { type: 'memory.error', itemId: 's2', action: 'save', error: 'The memory is empty: nothing was saved.' },
    ]);
    const outputs = toolOutputs();
    expect(outputs.slice(0, 2)).toEqual([`Memory ${city.id} updated.`, `Memory ${job.id} forgotten.`]);
    expect(outputs[2]).toContain('No memory has the id');
    expect((await memoriesOf(ctx, ann)).map((m) => m.content)).toEqual(['Lives in Paris.']);
    expect((await memoriesOf(ctx, bob)).map((m) => m.content)).toEqual(['Bob lives in Oslo.']);
  });

  test('the per-user cap holds for the assistant too: the model is told, nothing is saved', async () => {
    const { ctx, ann } = await setup(chatConfig({ memoryMaxPerUser: 1 }));
    await prefs(ctx, ann, { enableMemories: true });
    await remember(ctx, ann, 'Only one.');
    callsThenAnswers([{ id: 'm1', name: 'save_memory', args: { content: 'A second.' } }]);
    const frames = await chat(ctx, ann, 'Remember this too.');
    expect(memoryFrames(frames)).toEqual([]);
    expect(toolOutputs()[0]).toContain('PARLEY_MEMORY_MAX_PER_USER');
    expect((await memoriesOf(ctx, ann)).map((m) => m.content)).toEqual(['Only one.']);
  });

  test('research on the Responses API: the memories in the instructions, the tools offered, a function call saves', async () => {
    const { ctx, ann } = await setup(responsesConfig);
    await prefs(ctx, ann, { enableMemories: true, showMemoryToolOutput: true });
    const kept = await remember(ctx, ann, 'Writes in French.');
    let turn = 0;
    openai.responsesScript = () => (turn++ === 0 ? functionCallEvents('call_5', 'save_memory', { content: 'Studies marine biology.' }) : textEvents('Report.', 1));
    const frames = await readFrames(await ctx.call('chat/streamDeepResearch', { message: 'Research octopus hearts for my thesis in marine biology' }, ann));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'memory.in_progress', 'memory.completed', 'content_part.added', 'text.delta', 'done']);
    const saved = (await memoriesOf(ctx, ann)).find((m) => m.content === 'Studies marine biology.')!;
    expect(frames[3]!.data).toEqual({ type: 'memory.completed', itemId: 'call_5', action: 'save', memoryId: saved.id, content: 'Studies marine biology.' });
    const [first, followUp] = openai.requests.filter((r) => r.path === 'POST /v1/responses').map((r) => r.body);
    expect(first.instructions).toContain(`- [${kept.id}] Writes in French.`);
    expect(toolNames(first)).toEqual(expect.arrayContaining(MEMORY_TOOLS));
    expect(followUp.input).toEqual([{ type: 'function_call_output', call_id: 'call_5', output: `Saved as memory ${saved.id}.` }]);
  });
});

describe('memories off', () => {
  test('no memory text, no memory tools; a save_memory call arriving anyway is refused and saves nothing', async () => {
    const { ctx, ann } = await setup();
    // Showing tool output alone turns nothing on; memories kept through the API stay out of the prompt.
    await prefs(ctx, ann, { enableMemories: false, showMemoryToolOutput: true });
    await remember(ctx, ann, 'Has a cat called Miso.');
    callsThenAnswers([{ id: 'm1', name: 'save_memory', args: { content: 'Likes green tea.' } }]);
    const frames = await chat(ctx, ann, 'I love green tea.');
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'content_part.added', 'text.delta', 'done']);
    const [first] = chatRequests();
    expect(JSON.stringify(first)).not.toContain('Miso');
    expect(systemOf(first)).not.toContain(MEMORY_HEADING);
    expect(toolNames(first).filter((n) => MEMORY_TOOLS.includes(n))).toEqual([]);
    expect(toolOutputs()).toEqual(['Unknown tool save_memory.']);
    expect((await memoriesOf(ctx, ann)).map((m) => m.content)).toEqual(['Has a cat called Miso.']);
  });

  test('switched off during a turn: the memory tool refuses at once, saves nothing and shows nothing', async () => {
    const { ctx, ann } = await setup();
    await prefs(ctx, ann, { enableMemories: true, showMemoryToolOutput: true });
    let turn = 0;
    openai.chatScript = () => {
      if (turn++ > 0) return { deltas: [{ content: 'Ok.' }] };
      // The user turns memories off while the model is still writing its call.
      void prefs(ctx, ann, { enableMemories: false });
      return { pauseMs: 300, deltas: [{ tool_calls: [{ index: 0, id: 'm1', type: 'function', function: { name: 'save_memory', arguments: '{"content":"Likes jazz."}' } }] }], finish_reason: 'tool_calls' };
    };
    const frames = await chat(ctx, ann, 'I like jazz.');
    expect(memoryFrames(frames)).toEqual([]);
    expect(toolOutputs()).toEqual([MEMORY_OFF]);
    expect(await ctx.count('memories')).toBe(0);
  });

  test("group chats: the assistant gets no member's memories and no memory tools", async () => {
    const { ctx, ann, bob } = await setup();
    await prefs(ctx, ann, { enableMemories: true, showMemoryToolOutput: true });
    await remember(ctx, ann, 'Has a cat called Miso.');
    const g = await groupWith(ctx, ann, [bob]);
    await send(ctx, ann, g.id, '@ai what pet do I have?');
    await until(async () => (await ctx.json('groupChat/listMessages', { groupChatId: g.id }, ann)).body.messages.some((m: any) => m.role === 'assistant'), 'the group answer');
    const [req] = chatRequests();
    expect(JSON.stringify(req)).not.toContain('Miso');
    expect(toolNames(req).filter((n) => MEMORY_TOOLS.includes(n))).toEqual([]);
  });
});

describe('memories in the context budget', () => {
  test('PARLEY_MEMORY_PROMPT_TOKENS: all memories while they fit, else the most recently updated', async () => {
    const { ctx, ann } = await setup(chatConfig({ memoryPromptTokens: 200 }));
    await prefs(ctx, ann, { enableMemories: true });
    const made = [];
    for (let i = 0; i < 30; i++) made.push(await remember(ctx, ann, `Fact number ${i} about the user and their many hobbies.`));
    await chat(ctx, ann, 'Hi');
    const lines = memoryLines(systemOf(chatRequests().at(-1)));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(30);
    expect(estimateTokens([MEMORY_HEADING, ...lines].join('\n'))).toBeLessThanOrEqual(200 + lines.length);
    // Newest first: the last added lead.
    expect(lines[0]).toContain(`[${made[29].id}]`);
    // An old one updated is the most recent now.
    await ctx.json('memories/updateMemory', { id: made[0].id, content: 'Fact number 0, corrected.' }, ann);
    await chat(ctx, ann, 'Hi again');
    expect(memoryLines(systemOf(chatRequests().at(-1)))[0]).toBe(`- [${made[0].id}] Fact number 0, corrected.`);
  });

  test('a known window: memories go whole while the request fits; past that they are cut to an eighth of the room, newest kept, before older turns go', async () => {
    openai.gets = { '/api/version': { version: '0.12.6' }, '/api/ps': { models: [{ name: 'small:latest', model: 'small:latest', context_length: 3000 }] } };
    const { ctx, ann } = await setup();
    await prefs(ctx, ann, { enableMemories: true });
    const made = [];
    for (let i = 0; i < 12; i++) made.push(await remember(ctx, ann, `Memory ${i}: something the user said about the garden once.`));
    const room = 3000 - 750;
    let conversationId: string | undefined;
    for (let i = 1; i <= 16; i++) {
      const frames = await chat(ctx, ann, `Turn ${i}: ${'tell me more about the garden. '.repeat(20)}`, conversationId);
      expect(typesOf(frames).at(-1)).toBe('done');
      conversationId ??= frames[0]!.data.conversationId;
    }
    const requests = chatRequests();
    // The first turn fits whole: every memory.
    expect(memoryLines(systemOf(requests[0]))).toHaveLength(12);
    const last = requests.at(-1)!;
    const lines = memoryLines(systemOf(last));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(12);
    expect(lines[0]).toContain(`[${made[11].id}]`);
    expect(estimateTokens([MEMORY_HEADING, ...lines].join('\n'))).toBeLessThanOrEqual(room / 8 + lines.length + 1);
    // The conversation kept the rest of the room: the newest turn and some history.
    expect(last.messages.at(-1).content).toStartWith('Turn 16: ');
    expect(JSON.stringify(last.messages)).toContain('Turn 15: ');
    expect(JSON.stringify(last.messages)).not.toContain('Turn 1: ');
  });
});
