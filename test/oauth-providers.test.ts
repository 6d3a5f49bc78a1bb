import { afterAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { createTestContext, captureLog, SPEC_ERRORS } from './helpers';
import { startFakeOAuthProvider } from './fakes/oauth-provider';
import { testConfig } from '../src/config';
import { buildProvider, configuredProviderIds } from '../src/auth/oauth.providers';
import { fetchGithubProfile, githubProfile, oidcProfile, ProviderResponseError } from '../src/auth/oauth.profile';

const fake = startFakeOAuthProvider({ clientId: 'id', clientSecret: 'secret' });
afterAll(() => fake.stop());

const s256 = (v: string) => createHash('sha256').update(v).digest('base64url');

describe('GitHub and Google (fixed addresses: the authorization URL and the profile mapping)', () => {
  const config = testConfig({ oauthGithubClientId: 'gh-id', oauthGithubClientSecret: 'gh-secret', oauthGoogleClientId: 'g-id', oauthGoogleClientSecret: 'g-secret' });

  test('GitHub authorization URL asks for the e-mail scope', () => {
    const url = buildProvider(config, 'github', 'https://parley.example.org/api/auth/oauth/github/callback')!.authorizationUrl('st4te', 'verifier');
    expect(url.origin + url.pathname).toBe('https://github.com/login/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'gh-id',
      state: 'st4te',
      scope: 'read:user user:email',
      redirect_uri: 'https://parley.example.org/api/auth/oauth/github/callback',
    });
  });

  test('Google authorization URL uses PKCE and the OpenID scopes', () => {
    const verifier = 'v'.repeat(50);
    const url = buildProvider(config, 'google', 'https://p.example.org/cb')!.authorizationUrl('st4te', verifier);
    expect(url.origin + url.pathname).toBe('https://accounts.google.com/o/oauth2/v2/auth');
    expect(url.searchParams.get('code_challenge')).toBe(s256(verifier));
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toBe('openid email profile');
    expect(url.searchParams.get('client_id')).toBe('g-id');
  });

  test('GitHub profile: the primary verified e-mail, else any verified one, else none', () => {
    const user = { login: 'ann', name: 'Ann', avatar_url: 'https://a/ann.png', email: 'public@example.org' };
    const e = (email: string, primary: boolean, verified: boolean) => ({ email, primary, verified });
    expect(githubProfile(user, [e('old@example.org', false, true), e('ann@example.org', true, true)])).toEqual({
      email: 'ann@example.org',
      emailVerified: true,
      name: 'Ann',
      image: 'https://a/ann.png',
    });
    expect(githubProfile(user, [e('ann@example.org', true, false), e('alt@example.org', false, true)]).email).toBe('alt@example.org');
    const none = githubProfile({ login: 'ann' }, [e('ann@example.org', true, false)]);
    expect(none.emailVerified).toBe(false);
    expect(none.name).toBe('ann');
  });

  test('GitHub profile is read from /user and /user/emails with the access token', async () => {
    fake.githubEmails = [{ email: 'ann@example.org', primary: true, verified: true, visibility: 'private' }];
    const token = fake.issueToken({ sub: '1', name: 'Ann', picture: 'https://a/ann.png', preferred_username: 'ann' });
    expect(await fetchGithubProfile(`${fake.url}/github-api`, token)).toEqual({ email: 'ann@example.org', emailVerified: true, name: 'Ann', image: 'https://a/ann.png' });
    await expect(fetchGithubProfile(`${fake.url}/github-api`, 'wrong-token')).rejects.toBeInstanceOf(ProviderResponseError);
  });

  test('OIDC profile: email_verified as boolean or "true"; userinfo and ID token must name the same subject', () => {
    expect(oidcProfile({ sub: 'a', email: 'a@example.org', email_verified: 'true', preferred_username: 'a1' })).toEqual({
      email: 'a@example.org',
      emailVerified: true,
      name: 'a1',
      image: '',
    });
    expect(oidcProfile({ sub: 'a', email: 'a@example.org', email_verified: 'false' }).emailVerified).toBe(false);
    // userinfo silent on verification: the ID token's e-mail and flag are used together
    expect(oidcProfile({ sub: 'a', email: 'other@example.org' }, { sub: 'a', email: 'a@example.org', email_verified: true }).email).toBe('a@example.org');
    expect(() => oidcProfile({ sub: 'a' }, { sub: 'b' })).toThrow(ProviderResponseError);
  });
});

describe('auth/listProviders', () => {
  test('is public and lists only the providers whose settings are all present', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({
      log,
      users: [{ email: 'ann@example.org' }],
      config: {
        oauthGithubClientId: 'a',
        oauthGithubClientSecret: 'b',
        oauthKeycloakClientId: 'c',
        oauthKeycloakClientSecret: 'd',
        oauthKeycloakBaseUrl: 'https://id.example.org/realms/main',
        oauthGiteaClientId: 'only-an-id',
        signup: 'open',
      },
    });
    const expected = {
      providers: [
        { id: 'github', name: 'GitHub', signInUrl: '/api/auth/oauth/github' },
        { id: 'keycloak', name: 'Keycloak', signInUrl: '/api/auth/oauth/keycloak' },
      ],
      signup: 'open',
    };
    const anonymous = await ctx.json('auth/listProviders', {});
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual(expected);
    expect((await ctx.json('auth/listProviders', undefined, ctx.users[0])).body).toEqual(expected);
    // a bad credential on a public operation is simply ignored
    expect((await ctx.json('auth/listProviders', {}, { 'x-api-key': 'pk_nope' })).status).toBe(200);
    // input is still validated (an unknown field is ignored, as everywhere)
    expect((await ctx.json('auth/listProviders', '[]')).status).toBe(400);
    expect((await ctx.json('auth/listProviders', { extra: 1 })).body).toEqual(expected);
    const warned = lines.map((l) => JSON.parse(l)).find((l) => l.level === 'warn');
    expect(warned.providers).toEqual(['gitea']);
  });

  test('nothing configured: an empty list; the other operations stay private', async () => {
    const ctx = await createTestContext();
    expect((await ctx.json('auth/listProviders', {})).body).toEqual({ providers: [], signup: 'closed' });
    expect(configuredProviderIds(testConfig())).toEqual([]);
    expect((await ctx.json('auth/listSessions', {})).body).toEqual(SPEC_ERRORS[401]);
  });

  test('OpenAPI marks it public and documents the browser routes; so does /api/docs', async () => {
    const ctx = await createTestContext();
    const spec = (await (await ctx.app.handle(new Request('http://localhost/api/openapi.json'))).json()) as any;
    const op = spec.paths['/api/auth/listProviders'].post;
    expect(op.security).toEqual([]);
    expect(op.responses['401']).toBeUndefined();
    expect(spec.paths['/api/auth/listSessions'].post.responses['401']).toBeDefined();
    expect(spec.paths['/api/auth/oauth/{provider}'].get.responses['302']).toBeDefined();
    expect(spec.paths['/api/auth/oauth/{provider}/callback'].get.description).toContain('signup_closed');
    const docs = await (await ctx.app.handle(new Request('http://localhost/api/docs'))).text();
    expect(docs).toContain('POST /api/auth/listProviders</code> <em>(no credential needed)</em>');
  });
});
