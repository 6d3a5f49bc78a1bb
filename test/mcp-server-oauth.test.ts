/**
 * Parley as the OAuth 2.1 authorization server of its `/mcp` (docs/mcp-server.md, "OAuth"):
 * discovery from the 401, dynamic client registration, the consent operations, the code traded
 * with PKCE, tokens that work on `/mcp`, refresh with rotation (a used refresh token is dead),
 * revocation by the client and from Settings (mcpAccess/revokeGrant), and the official SDK client doing
 * the whole flow with its own OAuth provider. On both stores.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client, StreamableHTTPClientTransport, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/client';
import { createTestContext, type TestContext, type TestUser } from './helpers';
import { pruneOAuth } from '../src/mcp-server/oauth/oauth.store';

setDefaultTimeout(30_000);

const BASE = 'http://localhost';
const REDIRECT = 'http://127.0.0.1:33418/callback';

async function setup(now?: () => number) {
  const ctx = await createTestContext({ now, users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }] });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

const handle = (ctx: TestContext, path: string, init: RequestInit = {}) => ctx.app.handle(new Request(`${BASE}${path}`, init));
const form = (ctx: TestContext, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  handle(ctx, path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });

function pkce() {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  const challenge = new Bun.CryptoHasher('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

async function register(ctx: TestContext, metadata: Record<string, unknown> = {}) {
  const res = await handle(ctx, '/mcp/oauth/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Editor', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], ...metadata }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The user allows the client on the consent page; the code from the redirect it answers. */
async function consent(ctx: TestContext, as: TestUser, clientId: string, challenge: string, extra: Record<string, string> = {}) {
  const request = { clientId, redirectUri: REDIRECT, responseType: 'code', codeChallenge: challenge, codeChallengeMethod: 'S256', state: 'xyz', scope: 'mcp', ...extra };
  const checked = await ctx.json('mcpAccess/checkAuthorization', request, as);
  expect(checked.body).toMatchObject({ clientName: 'Editor', redirectHost: '127.0.0.1:33418', refusedWith: null });
  const approved = await ctx.json('mcpAccess/approveAuthorization', request, as);
  const url = new URL(approved.body.redirectTo);
  expect(url.searchParams.get('state')).toBe('xyz');
  expect(url.searchParams.get('iss')).toBe(BASE);
  return url.searchParams.get('code')!;
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
const mcpWith = (ctx: TestContext, token: string) =>
  handle(ctx, '/mcp', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(INITIALIZE) });

describe('discovery', () => {
  test('the 401 points at the resource metadata, which points at Parley as its authorization server', async () => {
    const { ctx } = await setup();
    const challenge = (await handle(ctx, '/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(INITIALIZE) })).headers.get('www-authenticate')!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    const resource = (await (await handle(ctx, new URL(metadataUrl).pathname)).json()) as any;
    expect(resource).toMatchObject({ resource: `${BASE}/mcp`, authorization_servers: [BASE], scopes_supported: ['mcp'] });
    const as = (await (await handle(ctx, '/.well-known/oauth-authorization-server')).json()) as any;
    expect(as).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/oauth/authorize`,
      token_endpoint: `${BASE}/mcp/oauth/token`,
      registration_endpoint: `${BASE}/mcp/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
    expect((await handle(ctx, '/.well-known/oauth-protected-resource')).status).toBe(200);
    // Listed in /api/openapi.json for generated clients, numbers typed as numbers.
    const openapi = (await (await handle(ctx, '/api/openapi.json')).json()) as any;
    for (const path of ['/mcp', '/mcp/oauth/register', '/mcp/oauth/token', '/mcp/oauth/revoke', '/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp'])
      expect(openapi.paths[path]).toBeDefined();
    expect(openapi.paths['/mcp/oauth/token'].post.responses[200].content['application/json'].schema.properties.expires_in.type).toBe('integer');
    expect((await handle(ctx, '/.well-known/oauth-authorization-server', { method: 'POST' })).status).toBe(405);
  });

  test('with PARLEY_PUBLIC_URL the documents name it, whatever the request\'s Host', async () => {
    const ctx = await createTestContext({ config: { publicUrl: 'https://parley.example.org' } });
    const as = (await (await ctx.app.handle(new Request('http://evil.example.com/.well-known/oauth-authorization-server'))).json()) as any;
    expect(as.issuer).toBe('https://parley.example.org');
  });
});

describe('registration', () => {
  test('refused: no redirect, http to another machine, a javascript: or fragment redirect, an unknown auth method', async () => {
    const { ctx } = await setup();
    for (const [metadata, error] of [
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://example.org/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://example.org/cb#x'] }, 'invalid_redirect_uri'],
      [{ token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
    ] as const) {
      const r = await register(ctx, metadata);
      expect(r).toMatchObject({ status: 400, body: { error } });
    }
    expect((await register(ctx, { redirect_uris: ['https://claude.example/cb', 'vscode://parley/cb', REDIRECT] })).status).toBe(201);
  });
});

describe('the authorization code flow', () => {
  test('consent, code with PKCE, tokens on /mcp, refresh with rotation, revocation by the client', async () => {
    const { ctx, ann } = await setup();
    const client = (await register(ctx)).body;
    expect(client.client_secret).toBeUndefined();
    const { verifier, challenge } = pkce();
    const code = await consent(ctx, ann, client.client_id, challenge);

    // A wrong verifier burns the code: a code works once, whatever happens.
    const wrong = await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: pkce().verifier });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as any).error).toBe('invalid_grant');
    const burnt = await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(burnt.status).toBe(400);

    const code2 = await consent(ctx, ann, client.client_id, challenge);
    const res = await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier, resource: `${BASE}/mcp` });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const tokens = (await res.json()) as any;
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'mcp' });
    expect(tokens.access_token).toStartWith('pma_');
    expect((await mcpWith(ctx, tokens.access_token)).status).toBe(200);
    // Stored hashed only.
    expect(JSON.stringify(await ctx.query(require('drizzle-orm').sql`SELECT * FROM oauth_tokens`))).not.toContain(tokens.access_token);

    const refreshed = (await (await form(ctx, '/mcp/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id })).json()) as any;
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect((await mcpWith(ctx, refreshed.access_token)).status).toBe(200);
    // Rotation: the used refresh token is dead.
    const reused = await form(ctx, '/mcp/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
    expect(((await reused.json()) as any).error).toBe('invalid_grant');

    // Another client cannot revoke it; its own client can, and every token of the grant stops.
    const other = (await register(ctx)).body;
    await form(ctx, '/mcp/oauth/revoke', { token: refreshed.refresh_token, client_id: other.client_id });
    expect((await mcpWith(ctx, refreshed.access_token)).status).toBe(200);
    expect((await form(ctx, '/mcp/oauth/revoke', { token: refreshed.refresh_token, client_id: client.client_id })).status).toBe(200);
    expect((await mcpWith(ctx, refreshed.access_token)).status).toBe(401);
    expect((await mcpWith(ctx, tokens.access_token)).status).toBe(401);
  });

  test('a confidential client authenticates with its secret (basic or post); a wrong one is 401', async () => {
    const { ctx, ann } = await setup();
    const client = (await register(ctx, { token_endpoint_auth_method: 'client_secret_basic' })).body;
    expect(client.client_secret).toStartWith('pms_');
    const { verifier, challenge } = pkce();
    const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}` });
    const code = await consent(ctx, ann, client.client_id, challenge);
    const refused = await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, basic('pms_wrong'));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as any).error).toBe('invalid_client');
    const code2 = await consent(ctx, ann, client.client_id, challenge);
    expect((await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, code_verifier: verifier }, basic(client.client_secret))).status).toBe(200);
    const code3 = await consent(ctx, ann, client.client_id, challenge);
    expect(
      (await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code: code3, redirect_uri: REDIRECT, code_verifier: verifier, client_id: client.client_id, client_secret: client.client_secret })).status,
    ).toBe(200);
  });

  test('the consent page\'s checks: an unknown client or redirect is shown, not followed; no PKCE goes back to the client; deny says access_denied', async () => {
    const { ctx, ann } = await setup();
    const client = (await register(ctx)).body;
    const base = { clientId: client.client_id, redirectUri: REDIRECT, responseType: 'code', codeChallenge: pkce().challenge, codeChallengeMethod: 'S256', state: 's1' };
    expect((await ctx.json('mcpAccess/checkAuthorization', { ...base, clientId: 'nope' }, ann)).status).toBe(400);
    const elsewhere = await ctx.json('mcpAccess/approveAuthorization', { ...base, redirectUri: 'https://evil.example.com/cb' }, ann);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.message).toContain('will not send you there');
    const noPkce = await ctx.json('mcpAccess/checkAuthorization', { ...base, codeChallenge: undefined }, ann);
    expect(new URL(noPkce.body.refusedWith).searchParams.get('error')).toBe('invalid_request');
    // S256 only: `plain` (the verifier itself as the challenge) is refused, as is no method at all.
    for (const codeChallengeMethod of ['plain', undefined]) {
      const weak = await ctx.json('mcpAccess/approveAuthorization', { ...base, codeChallengeMethod }, ann);
      expect(new URL(weak.body.redirectTo).searchParams.get('error')).toBe('invalid_request');
      expect(new URL(weak.body.redirectTo).searchParams.get('code')).toBeNull();
    }
    const implicit = await ctx.json('mcpAccess/approveAuthorization', { ...base, responseType: 'token' }, ann);
    expect(new URL(implicit.body.redirectTo).searchParams.get('error')).toBe('unsupported_response_type');
    const denied = new URL((await ctx.json('mcpAccess/denyAuthorization', base, ann)).body.redirectTo);
    expect([denied.searchParams.get('error'), denied.searchParams.get('state')]).toEqual(['access_denied', 's1']);
    expect((await ctx.json('mcpAccess/checkAuthorization', base)).status).toBe(401);
  });

  test('Settings lists the grants and ends one at once; another user\'s is 404', async () => {
    const { ctx, ann, bob } = await setup();
    const client = (await register(ctx)).body;
    const { verifier, challenge } = pkce();
    const code = await consent(ctx, ann, client.client_id, challenge);
    const tokens = (await (await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier })).json()) as any;
    const listed = (await ctx.json('mcpAccess/listGrants', {}, ann)).body.grants;
    expect(listed).toMatchObject([{ clientName: 'Editor', scope: 'mcp' }]);
    expect((await ctx.json('mcpAccess/listGrants', {}, bob)).body.grants).toEqual([]);
    expect((await ctx.json('mcpAccess/revokeGrant', { grantId: listed[0].grantId }, bob)).status).toBe(404);
    expect((await mcpWith(ctx, tokens.access_token)).status).toBe(200);
    expect((await ctx.json('mcpAccess/revokeGrant', { grantId: listed[0].grantId }, ann)).status).toBe(200);
    expect((await mcpWith(ctx, tokens.access_token)).status).toBe(401);
    const refreshed = await form(ctx, '/mcp/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
    expect(refreshed.status).toBe(400);
    expect((await ctx.json('mcpAccess/listGrants', {}, ann)).body.grants).toEqual([]);
  });
});

describe('tokens that no longer work', () => {
  test('an unknown or expired token is 401 with the challenge that starts OAuth again; an expired access token is refreshed, an expired refresh token is not', async () => {
    let clock = Date.now();
    const { ctx, ann } = await setup(() => clock);
    const challengeOf = async (res: Response) => {
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate') ?? '';
      expect(challenge).toStartWith('Bearer ');
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
      expect(challenge).toContain('scope="mcp"');
      return challenge;
    };
    for (const made_up of ['pma_nothing', 'pmr_nothing', 'pk_nothing', 'nothing']) await challengeOf(await mcpWith(ctx, made_up));

    const client = (await register(ctx)).body;
    const { verifier, challenge } = pkce();
    const code = await consent(ctx, ann, client.client_id, challenge);
    const tokens = (await (await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier })).json()) as any;
    expect((await mcpWith(ctx, tokens.access_token)).status).toBe(200);
    // A refresh token is no access token.
    await challengeOf(await mcpWith(ctx, tokens.refresh_token));

    clock += 3600 * 1000 + 1;
    await challengeOf(await mcpWith(ctx, tokens.access_token));
    const refreshed = await form(ctx, '/mcp/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
    const fresh = (await refreshed.json()) as any;
    expect((await mcpWith(ctx, fresh.access_token)).status).toBe(200);

    clock += 31 * 24 * 3600 * 1000;
    await challengeOf(await mcpWith(ctx, fresh.access_token));
    const late = await form(ctx, '/mcp/oauth/token', { grant_type: 'refresh_token', refresh_token: fresh.refresh_token, client_id: client.client_id });
    expect([late.status, ((await late.json()) as any).error]).toEqual([400, 'invalid_grant']);
  });

  test('an expired code is refused, and so is a code traded by another client or for another redirect', async () => {
    let clock = Date.now();
    const { ctx, ann } = await setup(() => clock);
    const client = (await register(ctx)).body;
    const other = (await register(ctx)).body;
    const { verifier, challenge } = pkce();
    const trade = (code: string, fields: Record<string, string> = {}) =>
      form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier, ...fields });
    const stale = await consent(ctx, ann, client.client_id, challenge);
    clock += 61 * 1000;
    expect((await trade(stale)).status).toBe(400);
    expect((await trade(await consent(ctx, ann, client.client_id, challenge), { client_id: other.client_id })).status).toBe(400);
    expect((await trade(await consent(ctx, ann, client.client_id, challenge), { redirect_uri: 'http://127.0.0.1:1/elsewhere' })).status).toBe(400);
    expect((await trade(await consent(ctx, ann, client.client_id, challenge), { resource: 'https://elsewhere.example/mcp' })).status).toBe(400);
    expect((await trade(await consent(ctx, ann, client.client_id, challenge))).status).toBe(200);
  });
});

describe('bounds', () => {
  test('registration is open but bounded: past the cap of clients nobody allowed, 429 until some go; a client refreshing in a loop keeps three access tokens', async () => {
    let clock = Date.now();
    const ctx = await createTestContext({ now: () => clock, config: { mcpOAuthMaxPendingClients: 10 }, users: [{ email: 'ann@example.org', name: 'Ann' }] });
    const ann = ctx.users[0]!;
    const clients = [];
    for (let i = 0; i < 10; i++) clients.push((await register(ctx)).body);
    const refused = await handle(ctx, '/mcp/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }) });
    expect([refused.status, ((await refused.json()) as any).error, refused.headers.get('retry-after')]).toEqual([429, 'temporarily_unavailable', '3600']);
    // Once a user allows one of them, it no longer counts.
    const { verifier, challenge } = pkce();
    const code = await consent(ctx, ann, clients[0].client_id, challenge);
    let tokens = (await (await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clients[0].client_id, code_verifier: verifier })).json()) as any;
    expect((await register(ctx)).status).toBe(201);

    const first = tokens.access_token;
    const issued = [first];
    for (let i = 0; i < 5; i++) {
      clock += 1000;
      tokens = (await (await form(ctx, '/mcp/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clients[0].client_id })).json()) as any;
      issued.push(tokens.access_token);
    }
    expect(await ctx.count('oauth_tokens')).toBe(3 + 1);
    // The newest three work (a process of the client still holding one it replaced goes on), the older do not.
    expect(await Promise.all(issued.map(async (t) => (await mcpWith(ctx, t)).status))).toEqual([401, 401, 401, 200, 200, 200]);
  });
});

describe('the SDK client with its OAuth provider', () => {
  test('discovers, registers, sends the user to consent, trades the code and lists the tools; an hour on, refreshes by itself', async () => {
    let clock = Date.now();
    const { ctx, ann } = await setup(() => clock);
    let info: any;
    let tokens: any;
    let verifier = '';
    let authorizeAt: URL | undefined;
    let discovery: OAuthDiscoveryState | undefined;
    const provider: OAuthClientProvider = {
      redirectUrl: REDIRECT,
      clientMetadata: { client_name: 'Editor', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
      clientInformation: () => info,
      saveClientInformation: (i) => void (info = i),
      tokens: () => tokens,
      saveTokens: (t) => void (tokens = t),
      redirectToAuthorization: (url) => void (authorizeAt = url),
      saveCodeVerifier: (v) => void (verifier = v),
      codeVerifier: () => verifier,
      // Kept as a real client keeps it: the issuer the callback's `iss` is checked against.
      saveDiscoveryState: (d) => void (discovery = d),
      discoveryState: () => discovery,
    };
    const fetch = (url: string | URL, init?: RequestInit) => ctx.app.handle(new Request(String(url), init));
    const transport = () => new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { authProvider: provider, fetch });
    const first = transport();
    await expect(new Client({ name: 'editor', version: '1' }).connect(first)).rejects.toThrow();
    expect(authorizeAt?.pathname).toBe('/oauth/authorize');
    // The consent page: its query, as the web app reads it, allowed by Ann.
    const q = authorizeAt!.searchParams;
    const request = {
      clientId: q.get('client_id')!,
      redirectUri: q.get('redirect_uri')!,
      responseType: q.get('response_type')!,
      codeChallenge: q.get('code_challenge')!,
      codeChallengeMethod: q.get('code_challenge_method')!,
      state: q.get('state') ?? undefined,
      scope: q.get('scope') ?? undefined,
      resource: q.get('resource') ?? undefined,
    };
    const approved = await ctx.json('mcpAccess/approveAuthorization', request, ann);
    expect(approved.status).toBe(200);
    // The callback's parameters as the client's listener gets them: `code`, and `iss` checked against the issuer (RFC 9207).
    await first.finishAuth(new URL(approved.body.redirectTo).searchParams);
    const client = new Client({ name: 'editor', version: '1' });
    await client.connect(transport());
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('start_research');

    // The access token expires; the client meets the 401, refreshes with its refresh token and goes on.
    const before = tokens.access_token;
    clock += 2 * 3600 * 1000;
    const later = new Client({ name: 'editor', version: '1' });
    await later.connect(transport());
    expect((await later.listTools()).tools.length).toBeGreaterThan(0);
    expect(tokens.access_token).not.toBe(before);
  });
});

describe('retention', () => {
  test('expired codes and tokens go; a registration never used goes after a day; a client with a grant stays', async () => {
    const { ctx, ann } = await setup();
    const used = (await register(ctx)).body;
    await register(ctx); // never used
    const { verifier, challenge } = pkce();
    const code = await consent(ctx, ann, used.client_id, challenge);
    await form(ctx, '/mcp/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: used.client_id, code_verifier: verifier });
    await consent(ctx, ann, used.client_id, challenge); // a code left unused
    const DAY = 24 * 3600 * 1000;
    const count = async (table: string) => ctx.count(table);
    expect([await count('oauth_clients'), await count('oauth_codes'), await count('oauth_tokens')]).toEqual([2, 1, 2]);
    // Two days on: the code and the access token have expired, the refresh token (30 days) not.
    await ctx.store.write((tx) => pruneOAuth(tx, Date.now() + 2 * DAY, DAY, 30 * DAY));
    expect([await count('oauth_clients'), await count('oauth_codes'), await count('oauth_tokens'), await count('oauth_grants')]).toEqual([1, 0, 1, 1]);
  });
});
