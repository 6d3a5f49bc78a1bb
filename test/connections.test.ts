import { afterAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { captureLog, createTestContext, until, type TestContext } from './helpers';
import { readFrames, typesOf, type Frame } from './sse';
import { modelList, startFakeOpenAI } from './fakes/openai';
import { startFakeAnthropic } from './fakes/anthropic';
import { updateUser } from '../src/account/account.store';
import { createMemoryBus } from '../src/pubsub/bus';
import type { Config } from '../src/config';
import type { Store } from '../src/db/work';

const openai = startFakeOpenAI();
const claude = startFakeAnthropic({ apiKey: 'sk-ant-secret-123' });
// Something that answers HTTP but is no AI server: a web page everywhere.
const webPage = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<html>hello</html>', { headers: { 'content-type': 'text/html' } }) });
// A port nothing listens on.
const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
const closedUrl = `http://127.0.0.1:${closed.port}/v1`;
closed.stop(true);
afterAll(() => (openai.stop(), claude.stop(), webPage.stop(true)));

openai.gets['/v1/models'] = modelList(['small', 'large']);

const envChat: Partial<Config> = { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', aiApiKey: 'sk-openai-env-secret' };
const users = [{ email: 'admin@example.org' }, { email: 'ann@example.org' }];

async function world(config: Partial<Config> = envChat, extra: Parameters<typeof createTestContext>[0] = {}) {
  const ctx = await createTestContext({ users, config, ...extra });
  await makeAdmin(ctx.store, ctx.users[0]!.user.id);
  return ctx;
}
const makeAdmin = (store: Store, id: string) => store.write((tx) => updateUser(tx, id, { isAdmin: true }, Date.now()));
const admin = (ctx: TestContext) => ctx.users[0]!;
const ann = (ctx: TestContext) => ctx.users[1]!;
const text = (frames: Frame[]) => frames.filter((f) => f.data.type === 'text.delta').map((f) => f.data.delta).join('');
const addClaude = (ctx: TestContext, extra: Record<string, unknown> = {}) =>
  ctx.json('admin/addConnection', { name: 'claude', kind: 'chat', api: 'anthropic', baseUrl: claude.url, credential: claude.apiKey, options: { model: 'claude-sonnet-4-6' }, ...extra }, admin(ctx));
const chat = async (ctx: TestContext, body: Record<string, unknown>, as = ann(ctx)) => readFrames(await ctx.call('chat/stream', body, as));

describe('connections', () => {
  test('two connections at once: both listed, and the model switched mid-conversation goes to the other server', async () => {
    const ctx = await world();
    const added = await addClaude(ctx);
    expect(added.status).toBe(200);
    expect(added.body.connection).toMatchObject({ name: 'claude', kind: 'chat', api: 'anthropic', hasCredential: true, source: 'admin', enabled: true });

    const list = await ctx.json('chat/listModels', {}, ann(ctx));
    expect(list.body.models.map((m: { id: string }) => m.id)).toEqual(['claude/claude-sonnet-4-6', 'claude/claude-haiku-4-5', 'env-ai/small', 'env-ai/large']);
    expect(list.body.models.find((m: { id: string }) => m.id === 'claude/claude-sonnet-4-6')).toMatchObject({ connection: 'claude', capabilities: { vision: true, tools: true, thinking: true, contextTokens: 200000 }, available: true });
    expect(list.body.default).toBe('env-ai/small');

    openai.chatScript = () => ({ deltas: [{ content: 'From the local model.' }] });
    const first = await chat(ctx, { message: 'Hello', model: 'env-ai/small' });
    expect(text(first)).toBe('From the local model.');
    const conversationId = first.find((f) => f.data.type === 'conversation.created')!.data.conversationId;

    claude.script = () => ({ blocks: [{ type: 'text', text: 'From Claude.' }] });
    const before = claude.requests.length;
    const second = await chat(ctx, { message: 'And you?', model: 'claude/claude-sonnet-4-6', conversationId });
    expect(typesOf(second)).not.toContain('error');
    expect(text(second)).toBe('From Claude.');
    const sent = claude.requests[before]!;
    expect(sent.headers['x-api-key']).toBe(claude.apiKey);
    expect(sent.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sent.headers.authorization).toBe(`Bearer ${claude.apiKey}`);
    expect(sent.body).toMatchObject({ model: 'claude-sonnet-4-6', stream: true, system: [{ type: 'text', cache_control: { type: 'ephemeral' } }] });
    // The whole conversation went along, the other model's answer included.
    expect(sent.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent.body.messages)).toContain('From the local model.');

    const models = await ctx.query<{ model: string }>(sqlResponsesOf(conversationId));
    expect(models.map((r) => r.model)).toEqual(['env-ai/small', 'claude/claude-sonnet-4-6']);
    // A plain upstream id (what clients sent before connections) still resolves.
    expect(text(await chat(ctx, { message: 'Plain', model: 'claude-haiku-4-5' }))).toBe('From Claude.');
  });

  test('an unknown, hidden or tier-forbidden model is a 400 before any stream, saying which', async () => {
    const ctx = await world();
    const unknown = await ctx.json('chat/stream', { message: 'x', model: 'nope/nothing' }, ann(ctx));
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('Unknown model "nope/nothing"');
    const notListed = await ctx.json('chat/stream', { message: 'x', model: 'env-ai/huge' }, ann(ctx));
    expect(notListed).toMatchObject({ status: 400, body: { message: 'Unknown model "env-ai/huge": env-ai does not list it.' } });

    expect((await ctx.json('admin/setModelSettings', { id: 'env-ai/large', tiers: ['PRO'], name: 'Large (Pro)' }, admin(ctx))).status).toBe(200);
    const forbidden = await ctx.json('chat/stream', { message: 'x', model: 'env-ai/large' }, ann(ctx));
    expect(forbidden).toMatchObject({ status: 400, body: { message: 'The model "env-ai/large" is not included in your subscription (FREE).' } });
    const listed = (await ctx.json('chat/listModels', {}, ann(ctx))).body.models.map((m: { id: string }) => m.id);
    expect(listed).toEqual(['env-ai/small']);

    await ctx.json('admin/setModelSettings', { id: 'env-ai/large', tiers: null, hidden: true }, admin(ctx));
    expect((await ctx.json('chat/stream', { message: 'x', model: 'env-ai/large' }, ann(ctx))).body.message).toBe('The model "env-ai/large" is not offered on this server.');
    const all = (await ctx.json('admin/listModelSettings', {}, admin(ctx))).body.models;
    expect(all.find((m: { id: string }) => m.id === 'env-ai/large')).toMatchObject({ hidden: true, name: 'Large (Pro)', tiers: null });
    // Nothing was started for any of them.
    expect(await ctx.count('responses')).toBe(0);
  });

  test('the defaults: chat and research follow the admin, and a model no connection offers is refused', async () => {
    const ctx = await world();
    await addClaude(ctx);
    const set = await ctx.json('admin/setDefaultModels', { chat: 'claude-sonnet-4-6', research: 'claude/claude-haiku-4-5' }, admin(ctx));
    expect(set.body.defaults).toEqual({ chat: 'claude/claude-sonnet-4-6', research: 'claude/claude-haiku-4-5', group: 'claude/claude-sonnet-4-6', title: 'claude/claude-sonnet-4-6' });
    expect((await ctx.json('chat/listModels', {}, ann(ctx))).body.default).toBe('claude/claude-sonnet-4-6');
    claude.script = () => ({ blocks: [{ type: 'text', text: 'Default Claude.' }] });
    expect(text(await chat(ctx, { message: 'Hi' }))).toBe('Default Claude.');
    const bad = await ctx.json('admin/setDefaultModels', { chat: 'nothing/here' }, admin(ctx));
    expect(bad.status).toBe(400);

    // Its connection disabled, then removed: the defaults fall back to the first connection's, and a turn without a model still goes.
    await ctx.json('admin/updateConnection', { id: 'claude', enabled: false }, admin(ctx));
    expect((await ctx.json('chat/listModels', {}, ann(ctx))).body.defaults).toEqual({ chat: 'env-ai/small', research: 'env-ai/o4-mini-deep-research', group: 'env-ai/small', title: 'env-ai/small' });
    await ctx.json('admin/removeConnection', { id: 'claude' }, admin(ctx));
    expect((await ctx.json('chat/listModels', {}, ann(ctx))).body.default).toBe('env-ai/small');
    openai.chatScript = () => ({ deltas: [{ content: 'Back to the local model.' }] });
    expect(text(await chat(ctx, { message: 'Hi again' }))).toBe('Back to the local model.');
  });

  test('without environment settings: no model until an admin connects one, then its model for chat and research alike', async () => {
    const ctx = await world({});
    expect((await ctx.json('chat/listModels', {}, ann(ctx))).body).toMatchObject({ models: [], default: '' });
    await addClaude(ctx);
    const { body } = await ctx.json('chat/listModels', {}, ann(ctx));
    // An admin's connection without a research model researches with its chat model (not OpenAI's deep-research one).
    expect(body.defaults).toEqual({ chat: 'claude/claude-sonnet-4-6', research: 'claude/claude-sonnet-4-6', group: 'claude/claude-sonnet-4-6', title: 'claude/claude-sonnet-4-6' });
  });

  test('Anthropic: a tool round trip with thinking, images sent as blocks, usage recorded once a round', async () => {
    const ctx = await world(envChat);
    await addClaude(ctx, { options: { model: 'claude-sonnet-4-6', thinkingTokens: 2048 } });
    const before = claude.requests.length;
    claude.script = (body, round) =>
      body.messages.at(-1).content.some((b: { type: string }) => b.type === 'tool_result')
        ? { blocks: [{ type: 'text', text: 'Your canvas is ready.' }], usage: { input: 40, output: 7, cacheRead: 30 } }
        : {
            blocks: [
              { type: 'thinking', thinking: 'A canvas fits.', signature: `sig-${round}` },
              { type: 'tool_use', id: 'toolu_01', name: 'generate_canvas', input: { topic: 'Plan', content: '# Plan' } },
            ],
            usage: { input: 20, output: 12, cacheWrite: 18 },
          };
    const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const frames = await chat(ctx, { message: 'Make a plan from this', model: 'claude/claude-sonnet-4-6', images: [{ imageUrl: png }] });
    const types = typesOf(frames);
    expect(types).toContain('reasoning_text.delta');
    expect(types).toContain('reasoning_text.done');
    expect(types).toContain('generate_canvas.in_progress');
    expect(types).toContain('widget.created');
    expect(types.at(-1)).toBe('done');
    expect(types).not.toContain('error');
    expect(text(frames)).toBe('Your canvas is ready.');

    const [first, second] = claude.requests.slice(before);
    expect(first!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(first!.body.max_tokens).toBe(4096 + 2048);
    expect(first!.body.tools.map((t: { name: string }) => t.name)).toContain('generate_canvas');
    expect(first!.body.messages[0].content[0]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.split(',')[1] } });
    // The assistant's turn went back with its signed thinking first, then the tool's result.
    expect(second!.body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'A canvas fits.', signature: expect.stringMatching(/^sig-\d+$/) });
    expect(second!.body.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01' });

    // Usage metering (docs/usage.md): each round once, as the API reported it; the prompt cache
    // read and written counted in the input.
    const rounds = async () => (await ctx.json('usage/listCalls', {}, ann(ctx))).body.calls.reverse();
    await until(async () => (await rounds()).length === 2, 'both rounds recorded');
    expect((await rounds()).map((c: any) => [c.model, c.inputTokens, c.outputTokens, c.cachedTokens, c.estimated])).toEqual([
      ['claude/claude-sonnet-4-6', 38, 12, 0, false],
      ['claude/claude-sonnet-4-6', 70, 7, 30, false],
    ]);
  });

  test('Anthropic errors: a wrong key and an error mid-stream are clear sentences, and the text so far is kept', async () => {
    const ctx = await world();
    await addClaude(ctx, { credential: 'sk-ant-wrong' });
    const refused = await chat(ctx, { message: 'Hi', model: 'claude/claude-sonnet-4-6' });
    expect(refused.at(-1)!.data).toMatchObject({ type: 'error', message: 'The AI provider refused Parley’s API key (HTTP 401).' });
    const tested = await ctx.json('admin/testConnection', { id: 'claude' }, admin(ctx));
    expect(tested.body).toMatchObject({ reachable: true, error: 'refused the credential (HTTP 401)' });

    await ctx.json('admin/updateConnection', { id: 'claude', credential: claude.apiKey }, admin(ctx));
    claude.script = () => ({ blocks: [{ type: 'text', text: 'Half an answer' }, { type: 'text', text: 'never sent' }], errorAfter: 1 });
    const cut = await chat(ctx, { message: 'Hi', model: 'claude/claude-sonnet-4-6' });
    expect(cut.at(-1)!.data).toMatchObject({ type: 'error', message: 'The AI provider is overloaded; try again later.' });
    expect(text(cut)).toBe('Half an answer');
    const items = await ctx.query<{ content: string }>(sqlAssistantItems());
    expect(items.map((i) => i.content)).toContain('Half an answer');
  });

  test('bad input: unreachable, not an AI server, a credential with a line break, a password in the URL, a taken name', async () => {
    const ctx = await world();
    await ctx.json('admin/addConnection', { name: 'gone', kind: 'chat', baseUrl: closedUrl }, admin(ctx));
    expect((await ctx.json('admin/testConnection', { id: 'gone' }, admin(ctx))).body).toMatchObject({ reachable: false, error: 'could not be reached (connection refused)', models: [] });
    await ctx.json('admin/addConnection', { name: 'page', kind: 'chat', baseUrl: `http://127.0.0.1:${webPage.port}/v1` }, admin(ctx));
    expect((await ctx.json('admin/testConnection', { id: 'page' }, admin(ctx))).body.error).toBe('answered, but not with a model list: is this the base URL of an AI server?');

    const newline = await ctx.json('admin/addConnection', { name: 'x', kind: 'chat', baseUrl: openai.url, credential: 'sk-abc\n' }, admin(ctx));
    expect(newline).toMatchObject({ status: 400, body: { message: 'The credential contains a line break: paste it again without one.' } });
    const userinfo = await ctx.json('admin/addConnection', { name: 'x', kind: 'chat', baseUrl: 'http://me:pw@127.0.0.1:1/v1' }, admin(ctx));
    expect(userinfo.body.message).toContain('put the credential in its own field');
    expect(userinfo.body.message).not.toContain('pw');
    expect((await ctx.json('admin/addConnection', { name: 'gone', kind: 'chat', baseUrl: openai.url }, admin(ctx))).status).toBe(409);
    // Added without a default model (as found on this machine): its first listed chat model.
    const found = await ctx.json('admin/addConnection', { name: 'found', kind: 'chat', baseUrl: openai.url }, admin(ctx));
    expect(found.body.connection.options).toEqual({ model: 'small' });
    const local = await ctx.json('admin/addConnection', { name: 'public-only', kind: 'chat', baseUrl: 'http://127.0.0.1:11434/v1', allowPrivate: false }, admin(ctx));
    expect(local).toMatchObject({ status: 400, body: { message: expect.stringContaining('does not allow that (allowPrivate)') } });
    expect((await ctx.json('admin/addConnection', { name: 'env-mine', kind: 'chat', baseUrl: openai.url }, admin(ctx))).status).toBe(400);
    expect((await ctx.json('admin/addConnection', { name: 'emb', kind: 'embeddings', baseUrl: openai.url, options: { thinkingTokens: 1 } }, admin(ctx))).body.message).toBe(
      'A embeddings connection has no option thinkingTokens (it takes: model, dimensions, batch, timeoutS).',
    );
    // The environment's own follows the environment.
    expect((await ctx.json('admin/updateConnection', { id: 'env-ai', baseUrl: openai.url }, admin(ctx))).status).toBe(400);
    expect((await ctx.json('admin/removeConnection', { id: 'env-ai' }, admin(ctx))).status).toBe(400);
    // A dead connection's models are listed, unavailable, and do not hold the list up.
    const list = (await ctx.json('chat/listModels', {}, ann(ctx))).body.models;
    expect(list.find((m: { connection: string }) => m.connection === 'gone')).toMatchObject({ available: false });
  });

  test('a connection removed while a turn runs: the turn finishes, the next one is refused in words', async () => {
    const ctx = await world();
    await ctx.json('admin/addConnection', { name: 'second', kind: 'chat', baseUrl: openai.url, options: { model: 'large' } }, admin(ctx));
    openai.chatScript = () => ({ deltas: [{ content: 'Slow ' }, { content: 'answer.' }], pauseMs: 300 });
    const res = await ctx.call('chat/stream', { message: 'Hi', model: 'second/large' }, ann(ctx));
    expect((await ctx.json('admin/removeConnection', { id: 'second' }, admin(ctx))).body).toEqual({ removed: true });
    const frames = await readFrames(res);
    expect(text(frames)).toBe('Slow answer.');
    expect(typesOf(frames)).not.toContain('error');
    const next = await ctx.json('chat/stream', { message: 'Again', model: 'second/large' }, ann(ctx));
    expect(next).toMatchObject({ status: 400, body: { message: 'Unknown model "second/large": chat/listModels lists the models of this server.' } });
    openai.chatScript = () => ({ deltas: [{ content: 'Hello' }, { content: ' from chat.' }] });
  });

  test('secrets: never in an answer, a log line or the database in clear', async () => {
    const { log, lines } = captureLog();
    const ctx = await world(envChat, { log });
    await addClaude(ctx);
    const listed = await ctx.json('admin/listConnections', {}, admin(ctx));
    const body = JSON.stringify(listed.body);
    expect(body).not.toContain(claude.apiKey);
    expect(body).not.toContain('sk-openai-env-secret');
    expect(listed.body.connections.map((c: { name: string; hasCredential: boolean }) => [c.name, c.hasCredential])).toEqual([
      ['claude', true],
      ['env-ai', true],
    ]);
    const doctor = JSON.stringify((await ctx.json('admin/doctor', {}, admin(ctx))).body);
    expect(doctor).toContain('connection claude (chat)');
    expect(doctor).not.toContain(claude.apiKey);
    const rows = await ctx.query<{ credential: string | null }>(sqlCredentials());
    expect(JSON.stringify(rows)).not.toContain(claude.apiKey);
    // The environment's key stays in the environment.
    expect(JSON.stringify(rows)).not.toContain('sk-openai-env-secret');
    expect(rows.some((r) => r.credential?.startsWith('v1.'))).toBe(true);
    expect(lines.join('\n')).not.toContain(claude.apiKey);
    // Only admins see connections at all.
    expect((await ctx.json('admin/listConnections', {}, ann(ctx))).status).toBe(403);
  });

  test('a connection added on one app is used by another sharing its database and bus', async () => {
    const bus = createMemoryBus();
    const one = await world(envChat, { deps: { bus } });
    const two = await createTestContext({ sameDatabaseAs: one, config: envChat, deps: { bus } });
    // Two warms its cache first: the change must reach it.
    expect((await two.json('chat/listModels', {}, ann(one))).body.models.map((m: { connection: string }) => m.connection)).not.toContain('claude');
    await addClaude(one);
    claude.script = () => ({ blocks: [{ type: 'text', text: 'Across apps.' }] });
    expect(text(await chat(two, { message: 'Hi', model: 'claude/claude-sonnet-4-6' }, ann(one)))).toBe('Across apps.');
    await one.json('admin/updateConnection', { id: 'claude', enabled: false }, admin(one));
    expect((await two.json('chat/stream', { message: 'x', model: 'claude/claude-sonnet-4-6' }, ann(one))).body.message).toBe(
      'The model "claude/claude-sonnet-4-6" is not available: its connection claude is disabled.',
    );
  });

  test('the Admin page\'s view: a wrong key in words, an option removed, capabilities as detected and as overridden', async () => {
    const keyed = startFakeOpenAI({ apiKey: 'sk-right-key' });
    keyed.gets['/v1/models'] = modelList(['cloud-large']);
    try {
      const ctx = await world();
      const add = await ctx.json('admin/addConnection', { name: 'cloud', kind: 'chat', baseUrl: keyed.url, credential: 'sk-wrong-key', options: { model: 'cloud-large', contextTokens: 8192, tools: 'off' } }, admin(ctx));
      expect(add.status).toBe(200);
      const wrong = (await ctx.json('admin/testConnection', { id: 'cloud' }, admin(ctx))).body;
      expect(wrong).toMatchObject({ reachable: true, error: 'refused the credential (HTTP 401)', models: [] });
      expect(JSON.stringify(wrong)).not.toContain('sk-wrong-key');
      await ctx.json('admin/updateConnection', { id: 'cloud', credential: 'sk-right-key' }, admin(ctx));
      expect((await ctx.json('admin/testConnection', { id: 'cloud' }, admin(ctx))).body).toMatchObject({ reachable: true, error: null, models: ['cloud-large'] });

      // null removes an option (it takes its default again); the others stay.
      const updated = await ctx.json('admin/updateConnection', { id: 'cloud', options: { contextTokens: null, tools: null } }, admin(ctx));
      expect(updated.body.connection.options).toEqual({ model: 'cloud-large' });

      await ctx.json('admin/setModelSettings', { id: 'cloud/cloud-large', capabilities: { vision: false, contextTokens: 32000 } }, admin(ctx));
      const entry = (await ctx.json('admin/listModelSettings', {}, admin(ctx))).body.models.find((m: { id: string }) => m.id === 'cloud/cloud-large');
      expect(entry).toMatchObject({
        capabilities: { vision: false, tools: true, contextTokens: 32000 },
        detected: { vision: true, tools: true, contextTokens: null },
        overrides: { vision: false, tools: null, thinking: null, contextTokens: 32000 },
      });
      // What every user is shown carries the result, not the admin's workings.
      const listed = (await ctx.json('chat/listModels', {}, ann(ctx))).body.models.find((m: { id: string }) => m.id === 'cloud/cloud-large');
      expect(Object.keys(listed).sort()).toEqual(['available', 'capabilities', 'connection', 'id', 'name']);
    } finally {
      keyed.stop();
    }
  });

  test('env seeding: an existing install gets its env-ai row; a changed environment updates it, an admin may disable it, an unset one goes', async () => {
    const first = await world();
    const row = async (ctx: TestContext) => (await ctx.json('admin/listConnections', {}, admin(first))).body.connections.find((c: { name: string }) => c.name === 'env-ai');
    await first.deps.connections.ready();
    expect(await row(first)).toMatchObject({ kind: 'chat', api: 'openai-chat', baseUrl: openai.url, source: 'env', enabled: true, options: { model: 'small' } });
    await first.json('admin/updateConnection', { id: 'env-ai', enabled: false }, admin(first));
    const restarted = await createTestContext({ sameDatabaseAs: first, config: { ...envChat, aiModel: 'large' } });
    await restarted.deps.connections.ready();
    expect(await row(restarted)).toMatchObject({ enabled: false, options: { model: 'large' } });
    // Instances starting at once seed the same rows: neither fails.
    const [a, b] = await Promise.all([1, 2].map(() => createTestContext({ sameDatabaseAs: first, config: { ...envChat, aiProvider: 'openai-chat', aiBaseUrl: `${openai.url}/v1` } })));
    await Promise.all([a!.deps.connections.ready(), b!.deps.connections.ready()]);
    expect((await a!.json('admin/listConnections', {}, admin(first))).body.connections.filter((c: { name: string }) => c.name === 'env-ai')).toHaveLength(1);
    const unset = await createTestContext({ sameDatabaseAs: first, config: {} });
    await unset.deps.connections.ready();
    expect(await row(unset)).toBeUndefined();
  });
});

// Raw reads of what the operations never show (helpers' `query` runs on either database).
const sqlResponsesOf = (conversationId: string) => sql`SELECT model FROM responses WHERE conversation_id = ${conversationId} ORDER BY created_at`;
const sqlAssistantItems = () => sql`SELECT content FROM conversation_items WHERE role = 'assistant'`;
const sqlCredentials = () => sql`SELECT name, credential FROM connections`;
