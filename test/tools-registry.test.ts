/**
 * The tool registry (src/tools/): what each kind of turn is offered, in which order, from which
 * domain's source; a source of another domain joining; a failing source; the budget; names offered
 * twice. Through HTTP with the fake OpenAI server, whose requests show the tools as sent.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { captureLog, createTestContext, until, type TestUser } from './helpers';
import { readFrames, typesOf } from './sse';
import { toolCallsThenAnswer } from './fakes/openai';
import { groupWith, send } from './group-helpers';
import type { Config } from '../src/config';
import { builtinToolSources } from '../src/build-deps';
import { createToolRegistry } from '../src/tools/registry';
import type { ToolSource, ToolTurn } from '../src/tools/tool.types';
import { fakeAiForFile } from './support/fake-ai-for-file';

setDefaultTimeout(30_000);

const { openai, searxng } = fakeAiForFile();

const chatConfig = (extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat',
  aiBaseUrl: openai.url,
  aiModel: 'small',
  researchModel: 'small',
  searchProvider: 'searxng',
  searxngUrl: searxng.url,
  rateLimitAi: { capacity: 1000, perMs: 1000 },
  ...extra,
});

const chatRequests = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name ?? t.name ?? t.type);

/** A source as another domain (MCP, a code interpreter) would contribute it. */
const echoSource = (over: Partial<ToolSource> = {}, seen: ToolTurn[] = []): ToolSource => ({
  id: 'echo',
  label: 'Echo',
  async tools(turn) {
    seen.push(turn);
    return [
      {
        name: 'echo',
        description: 'Say the text back.',
        parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        async run(args) {
          return `echo: ${String(args.text)}`;
        },
      },
    ];
  },
  ...over,
});

async function setup(config: Partial<Config> = chatConfig(), sources?: ToolSource[], log = captureLog()) {
  const ctx = await createTestContext({
    users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }],
    config,
    log: log.log,
    ...(sources ? { deps: { tools: createToolRegistry(sources) } } : {}),
  });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob, lines: log.lines };
}

describe("today's tools, from their domains' sources", () => {
  test('a chat turn: memory, images, canvas, history, web search, in that order; each switched by its own condition', async () => {
    const { ctx, ann } = await setup(chatConfig({ imagesBaseUrl: 'http://127.0.0.1:9/v1' }));
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    expect(toolNames(chatRequests()[0])).toEqual(['generate_image', 'edit_image', 'generate_canvas', 'search_history', 'web_search']);

    await ctx.json('preferences/update', { enableMemories: true }, ann);
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    expect(toolNames(chatRequests()[1])).toEqual([
      'save_memory',
      'update_memory',
      'forget_memory',
      'generate_image',
      'edit_image',
      'generate_canvas',
      'search_history',
      'web_search',
    ]);
  });

  test('research on openai-chat searches in its own loop: no web_search function; a group answer gets web_search alone', async () => {
    const { ctx, ann, bob } = await setup();
    await readFrames(await ctx.call('chat/streamDeepResearch', { message: 'tides' }, ann));
    const report = chatRequests().at(-1)!;
    expect(toolNames(report)).toEqual(['generate_canvas', 'search_history']);

    openai.requests.length = 0;
    const g = await groupWith(ctx, ann, [bob]);
    await send(ctx, ann, g.id, '@ai hello');
    await until(() => chatRequests().length > 0, 'the group answer');
    expect(toolNames(chatRequests()[0])).toEqual(['web_search']);
  });

  test('openai-responses: chat has no web_search function (OpenAI would search on every turn), research gets the hosted tool', async () => {
    const { ctx, ann } = await setup({ aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test', searchProvider: 'searxng', searxngUrl: searxng.url });
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    await readFrames(await ctx.call('chat/streamDeepResearch', { message: 'tides' }, ann));
    const [chat, research] = openai.requests.filter((r) => r.path === 'POST /v1/responses').map((r) => r.body);
    expect(toolNames(chat)).toEqual(['generate_canvas', 'search_history']);
    expect(toolNames(research)).toEqual(['generate_canvas', 'search_history', 'web_search_preview']);
  });
});

describe('contributed sources', () => {
  test("another domain's source joins without changing anyone else's: its tool is offered last and runs when called", async () => {
    const seen: ToolTurn[] = [];
    const { ctx, ann } = await setup(chatConfig(), [...builtinToolSources, echoSource({}, seen)]);
    openai.chatScript = toolCallsThenAnswer([{ id: 'e1', name: 'echo', args: { text: 'ping' } }], 'Done.');
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'say ping' }, ann));
    expect(typesOf(frames)).toEqual(['conversation.created', 'response.created', 'content_part.added', 'text.delta', 'done']);
    expect(toolNames(chatRequests()[0]).at(-1)).toBe('echo');
    expect(chatRequests()[1].messages.find((m: any) => m.role === 'tool').content).toBe('echo: ping');
    // The source learns who asks and for what.
    expect(seen[0]).toMatchObject({ kind: 'chat', user: { id: ann.user.id, enableMemories: false }, provider: 'openai-chat' });
    expect(seen[0]!.responseId).toBe(frames[1]!.data.responseId);
  });

  test('a source that fails is left out of that turn, logged; the turn goes on with the others', async () => {
    const broken = echoSource({
      id: 'broken',
      tools: async () => {
        throw new Error('server unreachable');
      },
    });
    const { ctx, ann, lines } = await setup(chatConfig(), [...builtinToolSources, broken]);
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    expect(typesOf(frames).at(-1)).toBe('done');
    expect(toolNames(chatRequests()[0])).toEqual(['generate_canvas', 'search_history', 'web_search']);
    expect(lines.some((l) => l.includes('a tool source failed') && l.includes('"source":"broken"') && l.includes('server unreachable'))).toBe(true);
  });

  test('a source serves the kinds of turn it names', async () => {
    const seen: ToolTurn[] = [];
    const { ctx, ann, bob } = await setup(chatConfig(), [...builtinToolSources, echoSource({ kinds: ['group'] }, seen)]);
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    expect(toolNames(chatRequests()[0])).not.toContain('echo');
    const g = await groupWith(ctx, ann, [bob]);
    await send(ctx, bob, g.id, '@ai hello');
    await until(() => chatRequests().length > 1, 'the group answer');
    expect(toolNames(chatRequests()[1])).toEqual(['web_search', 'echo']);
    expect(seen.map((t) => [t.kind, t.user.id, t.conversationId])).toEqual([['group', bob.user.id, g.conversationId]]);
  });

  test('a name offered twice: the first source keeps it, the later one is left out and logged', async () => {
    const twin = echoSource({ id: 'twin', tools: async () => [{ name: 'search_history', description: 'Not the real one.', parameters: { type: 'object' }, run: async () => 'wrong' }] });
    const { ctx, ann, lines } = await setup(chatConfig(), [...builtinToolSources, twin]);
    openai.chatScript = toolCallsThenAnswer([{ id: 'h1', name: 'search_history', args: { query: 'x' } }], 'Done.');
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    expect(toolNames(chatRequests()[0])).toEqual(['generate_canvas', 'search_history', 'web_search']);
    expect(chatRequests()[1].messages.find((m: any) => m.role === 'tool').content).toBe('Nothing found in earlier conversations.');
    expect(lines.some((l) => l.includes('a tool name is offered twice') && l.includes('"source":"twin"'))).toBe(true);
  });
});

describe('the budget (PARLEY_TOOLS_MAX_TOKENS)', () => {
  const bulky = (id: string, priority: number, n: number): ToolSource => ({
    id,
    label: id,
    priority,
    tools: async () =>
      Array.from({ length: n }, (_, i) => ({
        name: `${id}_${i}`,
        description: 'A tool with a long description. '.repeat(20),
        parameters: { type: 'object', properties: {} },
        run: async () => 'ok',
      })),
  });

  test('past the budget, whole sources go, the lowest priority first, and the log says which', async () => {
    const { ctx, ann, lines } = await setup(chatConfig({ toolsMaxTokens: 1500 }), [...builtinToolSources, bulky('low', 10, 4), bulky('high', 90, 2)]);
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    // Canvas, history and web search (~400 tokens) and `high` (2 × ~230) fit; `low` (4 × ~230) does not.
    expect(toolNames(chatRequests()[0])).toEqual(['generate_canvas', 'search_history', 'web_search', 'high_0', 'high_1']);
    const line = lines.find((l) => l.includes('tools left out of a turn'))!;
    expect(JSON.parse(line)).toMatchObject({ max: 1500, sources: [{ source: 'low', tools: 4 }] });
  });

  test('among equal priorities the last registered goes first; a budget of 0 offers nothing', async () => {
    const { ctx, ann } = await setup(chatConfig({ toolsMaxTokens: 1000 }), [...builtinToolSources, bulky('first', 50, 2), bulky('second', 50, 2)]);
    await readFrames(await ctx.call('chat/stream', { message: 'hi' }, ann));
    expect(toolNames(chatRequests()[0])).toEqual(['generate_canvas', 'search_history', 'web_search', 'first_0', 'first_1']);

    const none = await setup(chatConfig({ toolsMaxTokens: 0 }));
    openai.requests.length = 0;
    await readFrames(await none.ctx.call('chat/stream', { message: 'hi' }, none.ann));
    expect(chatRequests()[0].tools).toBeUndefined();
  });
});

describe('registering', () => {
  test('an id is registered once, and is 1–40 of [a-z0-9_]', () => {
    const registry = createToolRegistry([echoSource()]);
    expect(() => registry.register(echoSource())).toThrow('registered twice');
    expect(() => registry.register(echoSource({ id: 'Bad-Id' }))).toThrow('[a-z0-9_]');
    expect(registry.sources().map((s) => s.id)).toEqual(['echo']);
    expect(builtinToolSources.map((s) => s.id)).toEqual(['memory', 'files', 'images', 'video', 'canvas', 'history', 'web_search', 'mcp']);
  });
});
