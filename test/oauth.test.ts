import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { createTestContext, captureLog, type TestContext } from './helpers';
import { startFakeOAuthProvider, type Flavour } from './fakes/oauth-provider';
import type { Config } from '../src/config';
import { findUserByEmail, listUsers } from '../src/account/account.store';
import { checkOAuthPublicUrl } from '../src/ops/oauth-check';
import { testConfig } from '../src/config';

const CLIENT = { clientId: 'parley-client', clientSecret: 'parley-secret' };
const fake = startFakeOAuthProvider(CLIENT);
afterAll(() => fake.stop());

const APP = 'http://app.example.org/home';

/** Every configurable-address provider, pointed at the fake; Parley at the address the tests call it by. */
const providerConfig = (): Partial<Config> => ({
  publicUrl: 'http://localhost',
  oauthGiteaClientId: CLIENT.clientId,
  oauthGiteaClientSecret: CLIENT.clientSecret,
  oauthGiteaBaseUrl: fake.baseUrl('gitea'),
  oauthForgejoClientId: CLIENT.clientId,
  oauthForgejoClientSecret: CLIENT.clientSecret,
  oauthForgejoBaseUrl: fake.baseUrl('gitea'),
  oauthGitlabClientId: CLIENT.clientId,
  oauthGitlabClientSecret: CLIENT.clientSecret,
  oauthGitlabBaseUrl: fake.baseUrl('gitlab'),
  oauthKeycloakClientId: CLIENT.clientId,
  oauthKeycloakClientSecret: CLIENT.clientSecret,
  oauthKeycloakBaseUrl: fake.baseUrl('keycloak'),
  oauthAuthentikClientId: CLIENT.clientId,
  oauthAuthentikClientSecret: CLIENT.clientSecret,
  oauthAuthentikBaseUrl: fake.baseUrl('authentik'),
});

async function context(config: Partial<Config> = {}, users: { email: string }[] = []) {
  return await createTestContext({ users, config: { ...providerConfig(), appUrl: APP, ...config } });
}

/** name → value of the cookies a response sets (cleared ones included, as ''). */
function setCookies(res: Response): Map<string, { value: string; raw: string }> {
  const out = new Map<string, { value: string; raw: string }>();
  for (const raw of res.headers.getSetCookie()) {
    const [pair] = raw.split(';');
    const eq = pair!.indexOf('=');
    out.set(pair!.slice(0, eq), { value: decodeURIComponent(pair!.slice(eq + 1)), raw });
  }
  return out;
}

const cookieHeader = (jar: Map<string, { value: string }>) =>
  [...jar].filter(([, c]) => c.value).map(([n, c]) => `${n}=${encodeURIComponent(c.value)}`).join('; ');

/** A browser signing in: Parley → provider (consents at once) → Parley's callback. */
async function signIn(ctx: TestContext, provider: string, opts: { query?: string; cookie?: (jar: string) => string; back?: (url: URL) => void } = {}) {
  const start = await ctx.app.handle(new Request(`http://localhost/api/auth/oauth/${provider}${opts.query ?? ''}`));
  expect(start.status).toBe(302);
  const jar = setCookies(start);
  const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  expect(authorize.status).toBe(302);
  const back = new URL(authorize.headers.get('location')!);
  opts.back?.(back);
  const cookie = opts.cookie ? opts.cookie(cookieHeader(jar)) : cookieHeader(jar);
  const callback = await ctx.app.handle(new Request(back.href, { headers: { cookie, 'user-agent': 'test-browser/1.0' } }));
  return { start, jar, back, callback, cookie };
}

const location = (res: Response) => new URL(res.headers.get('location')!);

beforeEach(() => {
  fake.account = { sub: '1', email: 'ann@example.org', email_verified: true, name: 'Ann', picture: 'https://img.example.org/ann.png' };
  fake.consent = 'allow';
  fake.tokenError = undefined;
  fake.userinfoStatus = 200;
  fake.userinfoOmitsVerified = false;
  fake.idTokenEmailVerified = undefined;
  fake.authorizeRequests.length = 0;
  fake.tokenRequests.length = 0;
});

describe('sign-in with configurable-address providers (real arctic code against a local provider)', () => {
  for (const provider of ['gitea', 'forgejo', 'gitlab', 'keycloak', 'authentik']) {
    test(`${provider}: open sign-up creates the user, sets the session cookie and goes to the app`, async () => {
      const ctx = await context({ signup: 'open' });
      const { start, jar, callback } = await signIn(ctx, provider);

      const auth = fake.authorizeRequests[0]!;
      expect(auth.get('code_challenge_method')).toBe('S256');
      expect(auth.get('code_challenge')).toMatch(/^[\w-]{43}$/);
      expect(auth.get('scope')).toBe('openid email profile');
      expect(auth.get('redirect_uri')).toBe(`http://localhost/api/auth/oauth/${provider}/callback`);
      expect(fake.tokenRequests[0]!.get('code_verifier')).toBe(jar.get('parley_oauth_verifier')!.value);
      expect(jar.get('parley_oauth_state')!.value).toBe(`${provider}:${auth.get('state')}`);
      for (const c of start.headers.getSetCookie().slice(0, 2)) {
        expect(c).toContain('HttpOnly');
        expect(c).toContain('SameSite=Lax');
        expect(c).toContain('Path=/api/auth/oauth');
        expect(c).toContain('Max-Age=600');
      }

      expect(callback.status).toBe(302);
      expect(callback.headers.get('location')).toBe(APP);
      expect(callback.headers.get('cache-control')).toBe('no-store');
      expect(callback.headers.get('x-content-type-options')).toBe('nosniff');
      const set = setCookies(callback);
      for (const name of ['parley_oauth_state', 'parley_oauth_verifier', 'parley_oauth_redirect']) expect(set.get(name)!.raw).toContain('Max-Age=0');
      const session = set.get('parley_session')!;
      expect(session.value).toMatch(/^ps_/);
      expect(session.raw).toContain('HttpOnly');
      expect(session.raw).toContain('SameSite=Lax');
      // The server slides the session; the cookie must not expire before it does.
      expect(session.raw).toContain(`Max-Age=${400 * 86_400}`);

      const me = await ctx.json('auth/getSession', {}, { cookie: `parley_session=${session.value}` });
      expect(me.status).toBe(200);
      expect(me.body.user.email).toBe('ann@example.org');
      expect(me.body.user.name).toBe('Ann');
      expect(me.body.user.image).toBe('https://img.example.org/ann.png');
      const sessions = await ctx.json('auth/listSessions', {}, { cookie: `parley_session=${session.value}` });
      expect(sessions.body.sessions[0].userAgent).toBe('test-browser/1.0');
    });
  }

  test('closed sign-up (the default): an existing user signs in; nobody new is created', async () => {
    const ctx = await context({}, [{ email: 'Ann@Example.org' }]);
    fake.account.email = 'ANN@example.org';
    const { callback } = await signIn(ctx, 'keycloak');
    expect(callback.headers.get('location')).toBe(APP);
    expect(setCookies(callback).get('parley_session')!.value).toMatch(/^ps_/);
    expect(await ctx.store.read((tx) => listUsers(tx))).toHaveLength(1);

    fake.account = { sub: '2', email: 'bob@example.org', email_verified: true };
    const refused = await signIn(ctx, 'keycloak');
    expect(location(refused.callback).searchParams.get('error')).toBe('signup_closed');
    expect(location(refused.callback).origin + location(refused.callback).pathname).toBe(APP);
    expect(setCookies(refused.callback).has('parley_session')).toBe(false);
    expect(await ctx.store.read((tx) => findUserByEmail(tx, 'bob@example.org'))).toBeUndefined();
  });

  test('the sign-up allow-list admits listed e-mails and @domains only', async () => {
    const ctx = await context({ signup: 'open', signupAllow: ['@example.org', 'carol@elsewhere.net'] });
    const outcomes: Record<string, string | null> = {};
    for (const email of ['dan@example.org', 'carol@elsewhere.net', 'eve@elsewhere.net', 'mallory@sub.example.org']) {
      fake.account = { sub: email, email, email_verified: true };
      const { callback } = await signIn(ctx, 'gitea');
      outcomes[email] = location(callback).searchParams.get('error');
    }
    expect(outcomes).toEqual({
      'dan@example.org': null,
      'carol@elsewhere.net': null,
      'eve@elsewhere.net': 'signup_not_allowed',
      'mallory@sub.example.org': 'signup_not_allowed',
    });
    expect((await ctx.store.read((tx) => listUsers(tx))).map((u) => u.email).sort()).toEqual(['carol@elsewhere.net', 'dan@example.org']);
  });

  test('an unverified or missing e-mail is refused', async () => {
    const ctx = await context({ signup: 'open' });
    for (const account of [
      { sub: '3', email: 'ann@example.org', email_verified: false },
      { sub: '4', email: 'ann@example.org' },
      { sub: '5', email_verified: true },
    ]) {
      fake.account = account;
      const { callback } = await signIn(ctx, 'authentik');
      expect(location(callback).searchParams.get('error')).toBe('email_not_verified');
    }
    expect(await ctx.store.read((tx) => listUsers(tx))).toHaveLength(0);
  });

  test('Gitea without email_verified in userinfo: the ID token decides', async () => {
    const ctx = await context({ signup: 'open' });
    fake.userinfoOmitsVerified = true;
    fake.idTokenEmailVerified = false;
    expect(location((await signIn(ctx, 'gitea')).callback).searchParams.get('error')).toBe('email_not_verified');
    fake.idTokenEmailVerified = true;
    expect((await signIn(ctx, 'gitea')).callback.headers.get('location')).toBe(APP);
  });

  test('bad state: tampered, missing cookies, or started with another provider', async () => {
    const ctx = await context({ signup: 'open' });
    const tampered = await signIn(ctx, 'gitlab', { back: (u) => u.searchParams.set('state', 'forged') });
    expect(location(tampered.callback).searchParams.get('error')).toBe('invalid_state');
    const noCookies = await signIn(ctx, 'gitlab', { cookie: () => '' });
    expect(location(noCookies.callback).searchParams.get('error')).toBe('invalid_state');
    // Started at gitea, delivered to keycloak's callback.
    const crossed = await signIn(ctx, 'gitea', { back: (u) => (u.pathname = '/api/auth/oauth/keycloak/callback') });
    expect(location(crossed.callback).searchParams.get('error')).toBe('invalid_state');
    expect(fake.tokenRequests).toHaveLength(0); // no code was exchanged for any of them
    expect(await ctx.store.read((tx) => listUsers(tx))).toHaveLength(0);
  });

  test('provider errors: declined consent, a failing token endpoint, a failing userinfo, a replayed code', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ log, config: { ...providerConfig(), appUrl: APP, signup: 'open' } });
    fake.consent = 'deny';
    expect(location((await signIn(ctx, 'keycloak')).callback).searchParams.get('error')).toBe('access_denied');
    fake.consent = 'allow';
    fake.tokenError = 'invalid_grant';
    expect(location((await signIn(ctx, 'keycloak')).callback).searchParams.get('error')).toBe('provider_error');
    fake.tokenError = undefined;
    fake.userinfoStatus = 500;
    expect(location((await signIn(ctx, 'keycloak')).callback).searchParams.get('error')).toBe('provider_error');
    fake.userinfoStatus = 200;
    const ok = await signIn(ctx, 'keycloak');
    expect(ok.callback.headers.get('location')).toBe(APP);
    const replay = await ctx.app.handle(new Request(ok.back.href, { headers: { cookie: ok.cookie } }));
    expect(location(replay).searchParams.get('error')).toBe('provider_error');
    const failures = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'sign-in failed');
    expect(failures.map((f) => f.code)).toEqual(['access_denied', 'provider_error', 'provider_error', 'provider_error']);
    expect(failures[1].cause).toContain('invalid_grant');
    const all = lines.join('\n');
    expect(all).not.toContain(ok.jar.get('parley_oauth_verifier')!.value);
    expect(all).not.toContain(setCookies(ok.callback).get('parley_session')!.value);
  });

  test('without PARLEY_APP_URL and the web app the flow ends on a page: errors show a code, never a stack', async () => {
    const ctx = await createTestContext({ config: { ...providerConfig(), signup: 'open', web: false } });
    fake.account = { sub: '6', email: 'x<b>@example.org', email_verified: true };
    const ok = (await signIn(ctx, 'gitea')).callback;
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('text/html');
    const html = await ok.text();
    expect(html).toContain('x&lt;b&gt;@example.org');
    expect(setCookies(ok).get('parley_session')!.value).toMatch(/^ps_/);

    fake.account.email_verified = false;
    const refused = (await signIn(ctx, 'gitea')).callback;
    expect(refused.status).toBe(403);
    expect(refused.headers.get('x-frame-options')).toBe('DENY');
    const page = await refused.text();
    expect(page).toContain('<code>email_not_verified</code>');
    expect(page).not.toMatch(/at \w+ \(|\.ts:\d+/);
  });

  test('without PARLEY_APP_URL, with the web app served, the flow lands on it: / signed in, /?error=<code> refused', async () => {
    const ctx = await createTestContext({ config: { ...providerConfig(), signup: 'open' } });
    fake.account = { sub: '7', email: 'web@example.org', email_verified: true };
    const ok = (await signIn(ctx, 'gitea')).callback;
    expect(ok.status).toBe(302);
    expect(ok.headers.get('location')).toBe('/');
    expect(setCookies(ok).get('parley_session')!.value).toMatch(/^ps_/);
    fake.account.email_verified = false;
    const refused = (await signIn(ctx, 'gitea')).callback;
    expect(refused.status).toBe(302);
    expect(refused.headers.get('location')).toBe('/?error=email_not_verified');
    expect(setCookies(refused).get('parley_session')).toBeUndefined();
  });

  test('an unexpected failure ends on a server_error page; the cause is only logged', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ log, config: { ...providerConfig(), signup: 'open', web: false } });
    await ctx.dropTable('sessions');
    const { callback } = await signIn(ctx, 'authentik');
    expect(callback.status).toBe(500);
    const page = await callback.text();
    expect(page).toContain('<code>server_error</code>');
    expect(page).not.toContain('sessions');
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.level === 'error');
    expect(logged.cause).toContain('sessions');
  });

  test('unknown or unconfigured providers answer a 404 page on both routes', async () => {
    const ctx = await context();
    for (const path of ['nope', 'github', 'google', 'nope/callback', 'github/callback']) {
      const res = await ctx.app.handle(new Request(`http://localhost/api/auth/oauth/${path}`));
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('<code>unknown_provider</code>');
    }
  });

  test('PARLEY_PUBLIC_URL builds the callback address behind a proxy; the Host and X-Forwarded-* headers do not', async () => {
    const ctx = await context({ publicUrl: 'https://parley.example.org' });
    const spoofed = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' };
    const start = await ctx.app.handle(new Request('http://evil.example/api/auth/oauth/gitea', { headers: spoofed }));
    expect(location(start).searchParams.get('redirect_uri')).toBe('https://parley.example.org/api/auth/oauth/gitea/callback');
    expect(location(start).href.startsWith(`${fake.baseUrl('gitea')}/login/oauth/authorize?`)).toBe(true);
  });

  test('without PARLEY_PUBLIC_URL both routes answer the no_public_url page: no redirect, no cookie, a warning at start-up', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ log, config: { ...providerConfig(), appUrl: APP, publicUrl: undefined } });
    expect(lines.map((l) => JSON.parse(l)).find((l) => l.msg?.includes('PARLEY_PUBLIC_URL'))).toMatchObject({ level: 'warn', providers: ['gitea', 'forgejo', 'gitlab', 'keycloak', 'authentik'] });
    for (const path of ['gitea', 'gitea/callback?code=c&state=s']) {
      const res = await ctx.app.handle(new Request(`http://evil.example/api/auth/oauth/${path}`, { headers: { host: 'evil.example' } }));
      expect(res.status).toBe(503);
      expect(res.headers.get('location')).toBeNull();
      const page = await res.text();
      expect(page).toContain('<code>no_public_url</code>');
      expect(page).toContain('PARLEY_PUBLIC_URL');
      expect(page).not.toContain('evil.example');
      expect(res.headers.getSetCookie().every((c) => c.includes('Max-Age=0'))).toBe(true);
    }
    expect(fake.authorizeRequests).toHaveLength(0);
    // An unknown provider is still that, whatever else is missing.
    expect((await ctx.app.handle(new Request('http://localhost/api/auth/oauth/nope'))).status).toBe(404);
  });

  test("doctor's sign-in check: fails with a provider and no PARLEY_PUBLIC_URL, silent without providers", () => {
    expect(checkOAuthPublicUrl(testConfig())).toEqual([]);
    const [missing] = checkOAuthPublicUrl(testConfig({ ...providerConfig(), publicUrl: undefined }));
    expect(missing).toMatchObject({ name: 'sign-in', status: 'fail' });
    expect(missing!.detail).toContain('PARLEY_PUBLIC_URL');
    expect(missing!.fix).toContain('/api/auth/oauth/<id>/callback');
    expect(checkOAuthPublicUrl(testConfig({ ...providerConfig(), publicUrl: 'https://parley.example.org' }))).toEqual([
      { name: 'sign-in', status: 'ok', detail: 'gitea, forgejo, gitlab, keycloak, authentik; callbacks at https://parley.example.org/api/auth/oauth/<id>/callback' },
    ]);
  });
});

describe('native apps', () => {
  test('an allowed custom scheme receives the bearer token; no cookie is set', async () => {
    const ctx = await context({ signup: 'open', nativeRedirectSchemes: ['myapp'] });
    const { callback, jar } = await signIn(ctx, 'gitea', { query: `?redirect=${encodeURIComponent('myapp://auth/done?x=1')}` });
    expect(jar.get('parley_oauth_redirect')!.value).toBe('myapp://auth/done?x=1');
    const to = location(callback);
    expect(to.protocol).toBe('myapp:');
    expect(to.searchParams.get('x')).toBe('1');
    const token = to.searchParams.get('token')!;
    expect(token).toMatch(/^ps_/);
    expect(Date.parse(to.searchParams.get('expiresAt')!)).toBeGreaterThan(Date.now());
    expect(setCookies(callback).has('parley_session')).toBe(false);
    const me = await ctx.json('auth/getSession', {}, { authorization: `Bearer ${token}` });
    expect(me.body.user.email).toBe('ann@example.org');
  });

  test('errors go back to the app too', async () => {
    const ctx = await context({ nativeRedirectSchemes: ['myapp'] });
    const { callback } = await signIn(ctx, 'gitea', { query: '?redirect=myapp://auth' });
    expect(callback.headers.get('location')).toBe('myapp://auth?error=signup_closed');
  });

  test('a redirect off the allow-list is refused before anything starts, and never followed', async () => {
    const ctx = await context({ nativeRedirectSchemes: ['myapp'] });
    for (const r of ['https://evil.example.org/', 'otherapp://auth', 'javascript:alert(1)', 'not a url', '']) {
      const res = await ctx.app.handle(new Request(`http://localhost/api/auth/oauth/gitea?redirect=${encodeURIComponent(r)}`));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('<code>invalid_redirect</code>');
    }
  });

  test('a web sign-in deletes the return address an abandoned native sign-in left behind', async () => {
    const ctx = await context({ signup: 'open', nativeRedirectSchemes: ['myapp'] });
    const abandoned = await ctx.app.handle(new Request('http://localhost/api/auth/oauth/gitea?redirect=myapp://auth'));
    expect(setCookies(abandoned).get('parley_oauth_redirect')!.value).toBe('myapp://auth');
    const { jar, callback } = await signIn(ctx, 'gitea');
    expect(jar.get('parley_oauth_redirect')!.raw).toContain('Max-Age=0');
    expect(callback.headers.get('location')).toBe(APP);
  });
});
