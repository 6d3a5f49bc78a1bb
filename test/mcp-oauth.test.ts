/**
 * Signing users in to an MCP server behind OAuth 2.1 (test/fakes/mcp-oauth.ts in front of a real
 * server-everything): the connect flow through HTTP (discovery, dynamic registration, PKCE, the
 * callback), tokens sealed at rest, calls with the user's token, and refreshes once at a time:
 * 20 concurrent turns of one user with a token due make exactly one refresh, on one instance and
 * across two sharing the database, and the server (which revokes a grant whose refresh token is
 * used twice) never sees a reuse.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf, type Frame } from './sse';
import { startFakeOpenAI, toolCallsThenAnswer } from './fakes/openai';
import { startFakeMcpOAuth, type FakeMcpOAuth } from './fakes/mcp-oauth';
import { startEverythingHttp, type RunningServer } from './support/mcp-servers';
import { updateUser } from '../src/account/account.store';
import type { Config } from '../src/config';

setDefaultTimeout(90_000);

const openai = startFakeOpenAI();
let everything: RunningServer;
let oauth: FakeMcpOAuth;
const contexts: TestContext[] = [];

beforeAll(async () => {
  everything = await startEverythingHttp('streamableHttp');
  oauth = startFakeMcpOAuth(everything.url);
});
afterAll(async () => {
  for (const c of contexts) await c.deps.mcp.close();
  oauth.stop();
  everything.stop();
  openai.stop();
});
beforeEach(() => {
  oauth.tokenSeconds = 3600;
  openai.requests.length = 0;
});

const config: Partial<Config> = {
  aiProvider: 'openai-chat',
  aiBaseUrl: openai.url,
  aiModel: 'small',
  publicUrl: 'http://parley.test',
  rateLimitAi: { capacity: 1000, perMs: 1000 },
  rateLimitWrite: { capacity: 1000, perMs: 1000 },
  researchMaxPerUser: 50,
  researchMaxTotal: 100,
  maxStreamsPerUser: 50,
};

async function setup(extra: { sameDatabaseAs?: TestContext } = {}) {
  const ctx = await createTestContext({ users: extra.sameDatabaseAs ? [] : [{ email: 'admin@example.org' }, { email: 'ann@example.org' }], config, sameDatabaseAs: extra.sameDatabaseAs });
  contexts.push(ctx);
  return ctx;
}

const mcpFrames = (frames: Frame[]) => frames.filter((f) => String(f.data.type).startsWith('mcp_call.')).map((f) => f.data as any);

/** The browser's part: open the authorization URL, follow its redirect to Parley's callback. */
async function connect(ctx: TestContext, as: TestUser, serverId: string): Promise<Response> {
  const started = await ctx.json('mcp/connectServer', { id: serverId }, as);
  expect(started.status).toBe(200);
  const atServer = await fetch(started.body.authorizationUrl, { redirect: 'manual' });
  const back = new URL(atServer.headers.get('location')!);
  expect(back.origin + back.pathname).toBe('http://parley.test/api/mcp/oauth/callback');
  return ctx.app.handle(new Request(`http://parley.test${back.pathname}${back.search}`, { headers: { cookie: `parley_session=${as.token}` } }));
}

async function withServer() {
  const ctx = await setup();
  const [admin, ann] = ctx.users as [TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  const added = await ctx.json('admin/addMcpServer', { name: 'guarded', url: oauth.mcpUrl, auth: 'oauth' }, admin);
  expect(added.status).toBe(200);
  return { ctx, admin, ann, serverId: added.body.server.id as string };
}

describe('signing in', () => {
  test('connect: discovery, registration, PKCE, the callback; tokens sealed; the tools reach the user', async () => {
    const { ctx, ann, serverId } = await withServer();
    // Before: the server is listed, not connected, and its tools are not offered.
    expect((await ctx.json('mcp/listServers', {}, ann)).body.servers).toMatchObject([{ name: 'guarded', auth: 'oauth', connected: false }]);
    expect((await ctx.json('mcp/testServer', { id: serverId }, ann)).body).toMatchObject({ ok: false, needsSignIn: true });

    const res = await connect(ctx, ann, serverId);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/settings?mcp=connected&server=guarded');
    expect((await ctx.json('mcp/listServers', {}, ann)).body.servers[0].connected).toBe(true);

    const [row] = await ctx.query<{ tokens: string }>(sql`SELECT tokens FROM mcp_tokens`);
    expect(row!.tokens).toStartWith('v1.');
    expect(row!.tokens).not.toContain('at-');

    openai.chatScript = toolCallsThenAnswer([{ id: 'o1', name: 'mcp__guarded__echo', args: { message: 'signed in' } }], 'Yes.');
    const frames = await readFrames(await ctx.call('chat/stream', { message: 'Echo.' }, ann));
    expect(mcpFrames(frames).at(-1)).toEqual({ type: 'mcp_call.completed', itemId: 'o1', content: [{ type: 'text', text: 'Echo: signed in' }] });

    // Disconnect: the tokens go, the tools are no longer offered.
    expect((await ctx.json('mcp/disconnectServer', { id: serverId }, ann)).status).toBe(200);
    expect(await ctx.count('mcp_tokens')).toBe(0);
  });

  test('a callback in a browser signed in as someone else is refused, and keeps nothing', async () => {
    const { ctx, admin, ann, serverId } = await withServer();
    const started = await ctx.json('mcp/connectServer', { id: serverId }, ann);
    const back = new URL((await fetch(started.body.authorizationUrl, { redirect: 'manual' })).headers.get('location')!);
    const res = await ctx.app.handle(new Request(`http://parley.test${back.pathname}${back.search}`, { headers: { cookie: `parley_session=${admin.token}` } }));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toContain('mcp=error');
    expect((await ctx.json('mcp/listServers', {}, ann)).body.servers[0].connected).toBe(false);
  });

  test('a token the server stopped taking is refreshed once, and the call goes through', async () => {
    const { ctx, ann, serverId } = await withServer();
    await connect(ctx, ann, serverId);
    oauth.revokeAccess();
    const before = oauth.refreshes;
    const tested = await ctx.json('mcp/testServer', { id: serverId }, ann);
    expect(tested.body).toMatchObject({ ok: true });
    expect(oauth.refreshes - before).toBe(1);
  });
});

describe('refresh, once at a time', () => {
  async function turns(ctx: TestContext, as: TestUser, n: number, tag: string) {
    openai.chatScript = (req: any) => {
      // Each turn calls echo with its own message, then answers.
      const last = req.messages.at(-1);
      if (last.role === 'tool') return { deltas: [{ content: 'ok' }] };
      return toolCallsThenAnswer([{ id: `t-${last.content}`, name: 'mcp__guarded__echo', args: { message: last.content } }], 'ok')();
    };
    return Promise.all(Array.from({ length: n }, (_, i) => ctx.call('chat/stream', { message: `${tag}${i}` }, as).then(readFrames)));
  }

  test('20 concurrent turns with the token due: exactly one refresh, every call answered', async () => {
    const { ctx, ann, serverId } = await withServer();
    oauth.tokenSeconds = 2;
    await connect(ctx, ann, serverId);
    // The connection is open and the tools listed: the 20 calls then each ask for the token at once.
    await turns(ctx, ann, 1, 'warm');
    await Bun.sleep(2100);
    const before = { refreshes: oauth.refreshes, reuses: oauth.reuses };
    const all = await turns(ctx, ann, 20, 'a');
    for (const frames of all) {
      expect(typesOf(frames).at(-1)).toBe('done');
      expect(mcpFrames(frames).at(-1)?.type).toBe('mcp_call.completed');
    }
    expect(oauth.refreshes - before.refreshes).toBe(1);
    expect(oauth.reuses - before.reuses).toBe(0);
  });

  test('two instances sharing the database, 10 turns each: one refresh between them (the lease)', async () => {
    const { ctx, ann, serverId } = await withServer();
    oauth.tokenSeconds = 2;
    await connect(ctx, ann, serverId);
    const other = await setup({ sameDatabaseAs: ctx });
    await Promise.all([turns(ctx, ann, 1, 'warm'), turns(other, ann, 1, 'warm')]);
    await Bun.sleep(2100);
    const before = { refreshes: oauth.refreshes, reuses: oauth.reuses };
    const [a, b] = await Promise.all([turns(ctx, ann, 10, 'x'), turns(other, ann, 10, 'y')]);
    for (const frames of [...a, ...b]) expect(mcpFrames(frames).at(-1)?.type).toBe('mcp_call.completed');
    expect(oauth.refreshes - before.refreshes).toBe(1);
    expect(oauth.reuses - before.reuses).toBe(0);
  });
});
