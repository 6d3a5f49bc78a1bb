/**
 * Parley as an MCP server (`/mcp`, docs/mcp-server.md), through HTTP with the official SDK's
 * client on both protocol eras (2025-11-25's `initialize`, 2026-07-28's stateless requests):
 * authentication and the 401 challenge, the Origin check, the tools (research started, followed
 * with progress and resumed after a lost connection, its report and sources; file and history
 * search; memories only while they are on) and the report resources. The compiled binary and
 * a real socket: test/mcp-server-binary.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { startFakeOpenAI, textEvents, webSearchEvents } from './fakes/openai';
import type { Config } from '../src/config';

setDefaultTimeout(30_000);

const openai = startFakeOpenAI();
const dataDir = mkdtempSync(join(tmpdir(), 'parley-mcp-'));
afterAll(() => {
  openai.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(() => {
  openai.requests.length = 0;
  openai.eventDelayMs = 0;
  openai.responsesScript = () => [...webSearchEvents('ws_1', 'otters', ['https://otters.example.org/facts']), ...textEvents('Otters hold hands while they sleep.')];
});

const config: Partial<Config> = { aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test', rateLimitAi: { capacity: 1000, perMs: 1000 } };

async function setup(extra: Partial<Config> = {}): Promise<{ ctx: TestContext; ann: TestUser; bob: TestUser }> {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }], config: { dataDir, ...config, ...extra } });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

type Era = '2025-11-25' | '2026-07-28';

/** An SDK client talking to the in-process app (its fetch is the app's handler), as `key`. */
async function connect(ctx: TestContext, key: string, era: Era = '2025-11-25', headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
    fetch: (url, init) => ctx.app.handle(new Request(String(url), init)),
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
  });
  const client = new Client({ name: 'test', version: '1.0.0' }, era === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  await client.connect(transport);
  return client;
}

const textOf = (result: any): string => result.content.map((c: any) => c.text).join('\n');
const post = (ctx: TestContext, body: unknown, headers: Record<string, string>) =>
  ctx.app.handle(new Request('http://localhost/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) }));
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };

describe('authentication', () => {
  test('no credential, an unknown one, a revoked key: 401 with the challenge naming the resource metadata', async () => {
    const { ctx, ann } = await setup();
    for (const headers of [{}, { authorization: 'Bearer pk_nope' }, { authorization: 'Bearer nonsense' }] as Record<string, string>[]) {
      const res = await post(ctx, INITIALIZE, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp"');
    }
    expect((await post(ctx, INITIALIZE, { authorization: `Bearer ${ann.key}` })).status).toBe(200);
    expect((await post(ctx, INITIALIZE, { 'x-api-key': ann.key })).status).toBe(200);
    expect((await ctx.json('auth/revokeApiKey', { keyId: ann.keyId }, ann)).status).toBe(200);
    expect((await post(ctx, INITIALIZE, { authorization: `Bearer ${ann.key}` })).status).toBe(401);
  });

  test('a browser page of another origin is refused before anything else (DNS rebinding); loopback and the public URL pass', async () => {
    const { ctx, ann } = await setup({ publicUrl: 'https://parley.example.org' });
    const auth = { authorization: `Bearer ${ann.key}` };
    expect((await post(ctx, INITIALIZE, { ...auth, origin: 'http://evil.example.com', host: 'evil.example.com' })).status).toBe(403);
    expect((await post(ctx, INITIALIZE, { origin: 'http://evil.example.com' })).status).toBe(403);
    expect((await post(ctx, INITIALIZE, { ...auth, origin: 'null' })).status).toBe(403);
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:3000', 'https://parley.example.org']) expect((await post(ctx, INITIALIZE, { ...auth, origin })).status).toBe(200);
  });
});

for (const era of ['2025-11-25', '2026-07-28'] as const) {
  describe(`tools on ${era}`, () => {
    test('listed with a key; memory tools only while memories are on', async () => {
      const { ctx, ann } = await setup();
      const names = async () => (await (await connect(ctx, ann.key, era)).listTools()).tools.map((t) => t.name).sort();
      expect(await names()).toEqual(['cancel_research', 'follow_research', 'get_research', 'search_files', 'search_history', 'start_research']);
      await ctx.json('preferences/update', { enableMemories: true }, ann);
      expect(await names()).toEqual(
        ['add_memory', 'cancel_research', 'follow_research', 'forget_memory', 'get_research', 'list_memories', 'search_files', 'search_history', 'start_research', 'update_memory'],
      );
    });

    test('a research run: started, followed with progress to its report and sources, read again by id and as a resource', async () => {
      const { ctx, ann, bob } = await setup();
      const client = await connect(ctx, ann.key, era);
      const started = await client.callTool({ name: 'start_research', arguments: { question: 'Do otters sleep holding hands?' } });
      const { researchId, conversationId } = started.structuredContent as { researchId: string; conversationId: string };
      expect(researchId).toBeString();
      const progress: { progress: number; message?: string }[] = [];
      const followed = await client.callTool({ name: 'follow_research', arguments: { researchId } }, { onprogress: (p) => progress.push(p) });
      expect(followed.isError).toBeFalsy();
      expect(followed.structuredContent).toMatchObject({ done: true, status: 'completed', report: 'Otters hold hands while they sleep.', sources: [{ url: 'https://otters.example.org/facts' }] });
      expect(textOf(followed)).toContain('Otters hold hands while they sleep.');
      expect(textOf(followed)).toContain('https://otters.example.org/facts');
      const messages = progress.map((p) => p.message);
      expect(messages[0]).toStartWith('Research started');
      expect(messages).toContain('Searching the web: otters');
      expect(messages.at(-1)).toBe('Research finished.');
      // Growing event numbers: what a client that comes back passes as `after`.
      expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
      // The same run in the web app's API: a conversation of Ann's.
      expect((await ctx.json('chat/getConversation', { conversationId }, ann)).status).toBe(200);

      const again = await client.callTool({ name: 'get_research', arguments: { researchId } });
      expect(again.structuredContent).toMatchObject({ status: 'completed', done: true, question: 'Do otters sleep holding hands?' });
      const listed = await client.listResources();
      expect(listed.resources.map((r) => r.uri)).toEqual([`parley://research/${researchId}`]);
      const read = await client.readResource({ uri: `parley://research/${researchId}` });
      expect((read.contents[0] as { text: string }).text).toContain('## Sources');

      // Bob sees none of it.
      const bobs = await connect(ctx, bob.key, era);
      for (const name of ['follow_research', 'get_research', 'cancel_research']) {
        const r = await bobs.callTool({ name, arguments: { researchId } });
        expect(r.isError).toBe(true);
        expect(textOf(r)).toContain('No research run has the id');
      }
      expect((await bobs.listResources()).resources).toEqual([]);
      await expect(bobs.readResource({ uri: `parley://research/${researchId}` })).rejects.toThrow();
    });

    test("a refusal of the API (the per-user cap of running turns) is a tool error with the API's sentence", async () => {
      const { ctx, ann } = await setup({ researchMaxPerUser: 1 });
      openai.eventDelayMs = 50;
      const client = await connect(ctx, ann.key, era);
      const first = await client.callTool({ name: 'start_research', arguments: { question: 'One' } });
      expect(first.isError).toBeFalsy();
      const second = await client.callTool({ name: 'start_research', arguments: { question: 'Two' } });
      expect(second.isError).toBe(true);
      expect(textOf(second)).toMatch(/too many/i);
      const { researchId } = first.structuredContent as { researchId: string };
      expect((await client.callTool({ name: 'cancel_research', arguments: { researchId } })).structuredContent).toMatchObject({ cancelled: true, status: 'cancelled' });
    });
  });
}

describe('follow_research after a lost connection', () => {
  test('a call that waits less than the run answers where it got to; the next, from there, loses and repeats nothing', async () => {
    const { ctx, ann } = await setup();
    openai.eventDelayMs = 150;
    const client = await connect(ctx, ann.key);
    const { researchId } = (await client.callTool({ name: 'start_research', arguments: { question: 'Otters?' } })).structuredContent as { researchId: string };
    const seen: number[] = [];
    const first = await client.callTool({ name: 'follow_research', arguments: { researchId, waitSeconds: 1 } }, { onprogress: (p) => seen.push(p.progress) });
    const { done, lastSeq } = first.structuredContent as { done: boolean; lastSeq: number };
    expect(done).toBe(false);
    expect(textOf(first)).toContain(`"after": ${lastSeq}`);
    await client.close();
    // Another client, as after a restart of the editor: it goes on after the last event it had.
    const later = await connect(ctx, ann.key, '2026-07-28');
    const rest: number[] = [];
    const second = await later.callTool({ name: 'follow_research', arguments: { researchId, after: lastSeq } }, { onprogress: (p) => rest.push(p.progress) });
    expect(second.structuredContent).toMatchObject({ done: true, status: 'completed' });
    expect(rest.every((n) => n > lastSeq)).toBe(true);
    // Every described event once: those before the break and those after make the whole run.
    const whole: number[] = [];
    await later.callTool({ name: 'follow_research', arguments: { researchId } }, { onprogress: (p) => whole.push(p.progress) });
    expect([...seen.filter((n) => n <= lastSeq), ...rest]).toEqual(whole);
  });
});

describe('search and memories', () => {
  function upload(ctx: TestContext, as: TestUser, text: string, filename: string) {
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), filename);
    return ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as.key }, body: form }));
  }

  test("search_files finds the caller's documents only; search_history the caller's conversations", async () => {
    const { ctx, ann, bob } = await setup();
    expect((await upload(ctx, ann, 'The heron waits in the shallows at dawn.', 'birds.txt')).status).toBe(200);
    expect((await upload(ctx, bob, 'A heron of Bob.', 'bob.txt')).status).toBe(200);
    await ctx.deps.fileText.idle();
    const client = await connect(ctx, ann.key);
    const found = await client.callTool({ name: 'search_files', arguments: { query: 'heron' } });
    expect(found.structuredContent).toMatchObject({ mode: 'text', hits: [{ filename: 'birds.txt', excerpt: 'The heron waits in the shallows at dawn.' }] });
    expect(textOf(found)).toContain('birds.txt');
    expect(textOf(await client.callTool({ name: 'search_files', arguments: { query: 'walrus' } }))).toBe('No document matched.');
    const semantic = await client.callTool({ name: 'search_files', arguments: { query: 'heron', mode: 'semantic' } });
    expect(semantic.isError).toBe(true);
    expect(textOf(semantic)).toContain('Semantic search is not set up');

    openai.responsesScript = () => textEvents('Kingfishers dive for fish.');
    const { researchId } = (await client.callTool({ name: 'start_research', arguments: { question: 'Tell me about kingfishers' } })).structuredContent as { researchId: string };
    await client.callTool({ name: 'follow_research', arguments: { researchId } });
    const history = await client.callTool({ name: 'search_history', arguments: { query: 'kingfishers' } });
    expect((history.structuredContent as { hits: { text: string }[] }).hits.map((h) => h.text).sort()).toEqual(['Kingfishers dive for fish.', 'Tell me about kingfishers']);
    const bobs = await connect(ctx, bob.key);
    expect(textOf(await bobs.callTool({ name: 'search_history', arguments: { query: 'kingfishers' } }))).toBe('Nothing found in earlier conversations.');
  });

  test('memories: listed, added, updated and forgotten as the API does; another user\'s are unknown; off again, refused', async () => {
    const { ctx, ann, bob } = await setup({ memoryMaxPerUser: 2 });
    await ctx.json('preferences/update', { enableMemories: true }, ann);
    await ctx.json('preferences/update', { enableMemories: true }, bob);
    const bobsMemory = (await ctx.json('memories/addMemory', { content: 'Bob likes tea.' }, bob)).body;
    const client = await connect(ctx, ann.key);
    const added = await client.callTool({ name: 'add_memory', arguments: { content: '  Writes in French.  ' } });
    const { id } = added.structuredContent as { id: string };
    expect(textOf(added)).toBe(`Saved as memory ${id}.`);
    expect((await client.callTool({ name: 'update_memory', arguments: { id, content: 'Writes in Breton.' } })).structuredContent).toMatchObject({ id, content: 'Writes in Breton.' });
    await client.callTool({ name: 'add_memory', arguments: { content: 'Has a cat.' } });
    const full = await client.callTool({ name: 'add_memory', arguments: { content: 'One too many.' } });
    expect(full.isError).toBe(true);
    expect(textOf(full)).toContain('PARLEY_MEMORY_MAX_PER_USER');
    const listed = await client.callTool({ name: 'list_memories', arguments: {} });
    expect((listed.structuredContent as { memories: { content: string }[] }).memories.map((m) => m.content).sort()).toEqual(['Has a cat.', 'Writes in Breton.']);
    for (const name of ['update_memory', 'forget_memory']) {
      const r = await client.callTool({ name, arguments: { id: bobsMemory.id, content: 'Mine now.' } });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toBe(`No memory has the id "${bobsMemory.id}": nothing was changed.`);
    }
    expect(textOf(await client.callTool({ name: 'forget_memory', arguments: { id } }))).toBe(`Memory ${id} forgotten.`);
    expect((await ctx.json('memories/listMemories', {}, ann)).body.memories.map((m: { content: string }) => m.content)).toEqual(['Has a cat.']);
    expect((await ctx.json('memories/listMemories', {}, bob)).body.memories.map((m: { content: string }) => m.content)).toEqual(['Bob likes tea.']);
    // Switched off after the tools were listed: every request builds its server anew, without them.
    await ctx.json('preferences/update', { enableMemories: false }, ann);
    await expect(client.callTool({ name: 'add_memory', arguments: { content: 'Too late.' } })).rejects.toThrow('Tool add_memory not found');
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('add_memory');
    expect((await ctx.json('memories/listMemories', {}, ann)).body.memories).toHaveLength(1);
  });
});
