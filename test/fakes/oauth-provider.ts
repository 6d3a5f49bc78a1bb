import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * A local identity provider speaking OAuth 2.0 / OpenID Connect the way Gitea (and Forgejo),
 * GitLab, Keycloak and Authentik do, each at its real endpoint paths under its own prefix, plus
 * GitHub's REST user endpoints. The authorize endpoint plays a user who consents at once (or
 * declines); the token endpoint checks client credentials, the code (single use), redirect_uri
 * and the PKCE verifier like a real server would.
 */

export interface FakeAccount {
  sub: string;
  email?: string;
  email_verified?: boolean | string;
  name?: string;
  picture?: string;
  preferred_username?: string;
}

const flavours = {
  gitea: { prefix: '/gitea', authorize: '/login/oauth/authorize', token: '/login/oauth/access_token', userinfo: '/login/oauth/userinfo' },
  gitlab: { prefix: '/gitlab', authorize: '/oauth/authorize', token: '/oauth/token', userinfo: '/oauth/userinfo' },
  keycloak: {
    prefix: '/keycloak/realms/parley',
    authorize: '/protocol/openid-connect/auth',
    token: '/protocol/openid-connect/token',
    userinfo: '/protocol/openid-connect/userinfo',
  },
  authentik: { prefix: '/authentik', authorize: '/application/o/authorize/', token: '/application/o/token/', userinfo: '/application/o/userinfo/' },
} as const;
export type Flavour = keyof typeof flavours;

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string | null;
  scope: string;
  account: FakeAccount;
  used: boolean;
}

const b64url = (buf: Buffer | string) => Buffer.from(buf).toString('base64url');

export function startFakeOAuthProvider(opts: { clientId: string; clientSecret: string }) {
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, FakeAccount>();
  const fake = {
    url: '',
    /** Who signs in at the authorize endpoint. */
    account: { sub: '1', email: 'ann@example.org', email_verified: true, name: 'Ann', picture: 'https://img.example.org/ann.png' } as FakeAccount,
    consent: 'allow' as 'allow' | 'deny',
    /** When set, the token endpoint answers 400 with this OAuth error code. */
    tokenError: undefined as string | undefined,
    userinfoStatus: 200,
    /** Older Gitea: userinfo has no `email_verified`; the ID token does. */
    userinfoOmitsVerified: false,
    /** The ID token's own `email_verified` (defaults to the account's). */
    idTokenEmailVerified: undefined as boolean | undefined,
    githubEmails: [] as { email: string; primary: boolean; verified: boolean; visibility: string | null }[],
    authorizeRequests: [] as URLSearchParams[],
    tokenRequests: [] as URLSearchParams[],
    baseUrl: (f: Flavour) => fake.url + flavours[f].prefix,
    /** An access token for `account`, as if a sign-in had just finished (for the GitHub API fake). */
    issueToken: (account: FakeAccount) => {
      const t = b64url(randomBytes(24));
      tokens.set(t, account);
      return t;
    },
    stop: () => server.stop(true),
  };

  const json = (body: unknown, status = 200) => Response.json(body, { status, headers: { 'cache-control': 'no-store' } });

  function authorize(url: URL): Response {
    const q = url.searchParams;
    fake.authorizeRequests.push(q);
    const redirectUri = q.get('redirect_uri');
    if (q.get('client_id') !== opts.clientId || !redirectUri) return new Response('unknown client', { status: 400 });
    const back = new URL(redirectUri);
    back.searchParams.set('state', q.get('state') ?? '');
    if (q.get('response_type') !== 'code') back.searchParams.set('error', 'unsupported_response_type');
    else if (fake.consent === 'deny') back.searchParams.set('error', 'access_denied');
    else {
      const code = b64url(randomBytes(16));
      grants.set(code, { clientId: opts.clientId, redirectUri, challenge: q.get('code_challenge'), scope: q.get('scope') ?? '', account: { ...fake.account }, used: false });
      back.searchParams.set('code', code);
    }
    return new Response(null, { status: 302, headers: { location: back.href } });
  }

  async function token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    fake.tokenRequests.push(form);
    const basic = req.headers.get('authorization')?.replace(/^Basic /, '');
    if (basic !== b64(`${opts.clientId}:${opts.clientSecret}`)) return json({ error: 'invalid_client' }, 401);
    if (fake.tokenError) return json({ error: fake.tokenError, error_description: 'configured to fail' }, 400);
    const grant = grants.get(form.get('code') ?? '');
    if (form.get('grant_type') !== 'authorization_code' || !grant || grant.used) return json({ error: 'invalid_grant' }, 400);
    grant.used = true;
    if (grant.redirectUri !== form.get('redirect_uri')) return json({ error: 'invalid_grant', error_description: 'redirect_uri mismatch' }, 400);
    if (grant.challenge !== null) {
      const verifier = form.get('code_verifier') ?? '';
      if (b64url(createHash('sha256').update(verifier).digest()) !== grant.challenge) return json({ error: 'invalid_grant', error_description: 'PKCE' }, 400);
    }
    const accessToken = b64url(randomBytes(24));
    tokens.set(accessToken, grant.account);
    const body: Record<string, unknown> = { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: grant.scope };
    if (grant.scope.split(' ').includes('openid')) body.id_token = idToken(grant.account);
    return json(body);
  }

  const b64 = (s: string) => Buffer.from(s).toString('base64');

  function idToken(a: FakeAccount): string {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: fake.url, aud: opts.clientId, iat: now, exp: now + 300, ...a, email_verified: fake.idTokenEmailVerified ?? a.email_verified };
    const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const body = b64url(JSON.stringify(claims));
    return `${head}.${body}.${b64url(createHmac('sha256', opts.clientSecret).update(`${head}.${body}`).digest())}`;
  }

  function bearerAccount(req: Request): FakeAccount | undefined {
    const t = /^Bearer (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1];
    return t ? tokens.get(t) : undefined;
  }

  function userinfo(req: Request): Response {
    const account = bearerAccount(req);
    if (!account) return json({ error: 'invalid_token' }, 401);
    if (fake.userinfoStatus !== 200) return new Response('upstream trouble', { status: fake.userinfoStatus });
    const { email_verified, ...rest } = account;
    return json(fake.userinfoOmitsVerified ? rest : { ...rest, email_verified });
  }

  function github(req: Request, path: string): Response {
    const account = bearerAccount(req);
    if (!account || !req.headers.get('user-agent')) return json({ message: 'Bad credentials' }, 401);
    if (path === '/user') return json({ login: account.preferred_username ?? 'ann', id: 1, name: account.name ?? null, avatar_url: account.picture ?? '', email: null });
    if (path === '/user/emails') return json(fake.githubEmails);
    return json({ message: 'Not Found' }, 404);
  }

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname.startsWith('/github-api/')) return github(req, url.pathname.slice('/github-api'.length));
      for (const f of Object.values(flavours)) {
        if (!url.pathname.startsWith(f.prefix)) continue;
        const rest = url.pathname.slice(f.prefix.length);
        if (rest === f.authorize && req.method === 'GET') return authorize(url);
        if (rest === f.token && req.method === 'POST') return token(req);
        if (rest === f.userinfo && req.method === 'GET') return userinfo(req);
      }
      return new Response('not found', { status: 404 });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}

export type FakeOAuthProvider = ReturnType<typeof startFakeOAuthProvider>;
