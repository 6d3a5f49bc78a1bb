/**
 * An MCP server behind OAuth 2.1, as remote MCP servers are on the internet: a protected resource
 * (RFC 9728 metadata; 401 with `WWW-Authenticate: Bearer resource_metadata=…` without a valid
 * token) in front of a real MCP server (server-everything over streamable HTTP, proxied as it
 * streams), and its authorization server (RFC 8414 metadata, dynamic client registration, an
 * authorization endpoint that approves at once, PKCE S256, refresh tokens that rotate). Like
 * servers that follow RFC 9700, it revokes the whole grant when a refresh token is used twice:
 * two refreshes at once break the session, which is what the tests must show never happens.
 */
import { createHash, randomUUID } from 'node:crypto';

export interface FakeMcpOAuth {
  url: string;
  /** The MCP endpoint. */
  mcpUrl: string;
  refreshes: number;
  registrations: number;
  /** Refresh tokens presented again after they were rotated (each revokes the grant). */
  reuses: number;
  /** Seconds an access token lives. */
  tokenSeconds: number;
  /** Make every access token issued so far invalid (the server forgot them). */
  revokeAccess(): void;
  stop(): void;
}

export function startFakeMcpOAuth(upstream: string): FakeMcpOAuth {
  const codes = new Map<string, { challenge: string; clientId: string; redirectUri: string }>();
  const access = new Map<string, number>();
  /** refresh token → its grant; rotated ones stay, marked used. */
  const refresh = new Map<string, { grant: string; used: boolean }>();
  const revokedGrants = new Set<string>();
  const upstreamUrl = new URL(upstream);

  const issue = (grant: string) => {
    const accessToken = `at-${randomUUID()}`;
    const refreshToken = `rt-${randomUUID()}`;
    access.set(accessToken, Date.now() + state.tokenSeconds * 1000);
    refresh.set(refreshToken, { grant, used: false });
    return Response.json({ access_token: accessToken, token_type: 'Bearer', expires_in: state.tokenSeconds, refresh_token: refreshToken });
  };
  const oauthError = (error: string, status = 400) => Response.json({ error }, { status });

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req): Promise<Response> {
      const url = new URL(req.url);
      const base: string = `http://127.0.0.1:${server.port}`;
      if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) return Response.json({ resource: `${base}/mcp`, authorization_servers: [base] });
      if (url.pathname === '/.well-known/oauth-authorization-server')
        return Response.json({
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          registration_endpoint: `${base}/register`,
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none'],
        });
      if (url.pathname === '/register' && req.method === 'POST') {
        state.registrations++;
        const body = (await req.json()) as Record<string, unknown>;
        return Response.json({ ...body, client_id: `client-${randomUUID()}`, token_endpoint_auth_method: 'none' }, { status: 201 });
      }
      if (url.pathname === '/authorize') {
        const p = url.searchParams;
        if (p.get('code_challenge_method') !== 'S256' || !p.get('code_challenge')) return oauthError('invalid_request');
        const code = `code-${randomUUID()}`;
        codes.set(code, { challenge: p.get('code_challenge')!, clientId: p.get('client_id')!, redirectUri: p.get('redirect_uri')! });
        const back = new URL(p.get('redirect_uri')!);
        back.searchParams.set('code', code);
        back.searchParams.set('state', p.get('state') ?? '');
        return new Response(null, { status: 302, headers: { location: back.href } });
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(await req.text());
        if (form.get('grant_type') === 'authorization_code') {
          const code = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          const verifier = form.get('code_verifier') ?? '';
          if (!code || createHash('sha256').update(verifier).digest('base64url') !== code.challenge) return oauthError('invalid_grant');
          return issue(randomUUID());
        }
        if (form.get('grant_type') === 'refresh_token') {
          state.refreshes++;
          const held = refresh.get(form.get('refresh_token') ?? '');
          if (!held || revokedGrants.has(held.grant)) return oauthError('invalid_grant');
          if (held.used) {
            // RFC 9700: a rotated refresh token used again means it leaked; the grant is revoked.
            state.reuses++;
            revokedGrants.add(held.grant);
            return oauthError('invalid_grant');
          }
          held.used = true;
          return issue(held.grant);
        }
        return oauthError('unsupported_grant_type');
      }
      if (url.pathname === '/mcp') {
        const token = req.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
        const until = access.get(token);
        if (!until || until < Date.now())
          return new Response('{"error":"invalid_token"}', {
            status: 401,
            headers: { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`, 'content-type': 'application/json' },
          });
        const headers = new Headers(req.headers);
        headers.delete('authorization');
        headers.set('host', upstreamUrl.host);
        const res = await fetch(new URL(`${upstreamUrl.pathname}${url.search}`, upstreamUrl), {
          method: req.method,
          headers,
          body: req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer(),
          signal: req.signal,
        });
        return new Response(res.body, { status: res.status, headers: res.headers });
      }
      return new Response('not found', { status: 404 });
    },
  });
  const state: FakeMcpOAuth = {
    url: `http://127.0.0.1:${server.port}`,
    mcpUrl: `http://127.0.0.1:${server.port}/mcp`,
    refreshes: 0,
    registrations: 0,
    reuses: 0,
    tokenSeconds: 3600,
    revokeAccess: () => access.clear(),
    stop: () => server.stop(true),
  };
  return state;
}
