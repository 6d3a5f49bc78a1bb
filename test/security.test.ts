import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { operations } from '../src/app';
import { compileInput } from '../src/http/body';
import { securityHeaders } from '../src/http/security-headers';
import { createTestContext, captureLog, bearer, type TestUser } from './helpers';
import { sampleValid } from './support/schema-arb';
import { snapshotDb, tableNames } from './support/db-snapshot';
import { createSession } from '../src/auth/auth.store';
import { testOps } from './support/test-ops';
import { t } from 'elysia';
import { defineOperation } from '../src/http/operation';
import { AppError } from '../src/http/errors';
import { updateUser } from '../src/account/account.store';
import { maskSecretsIn, maskUrl } from '../src/mask-secrets';

// Shared machines can be slow; a generous ceiling only turns a hang into a failure.
setDefaultTimeout(60_000);

/** Every response must carry these, whatever produced it (handler, error, 404/405, stream). */
function expectSecurityHeaders(res: Response, what: string) {
  for (const [name, value] of Object.entries(securityHeaders)) expect({ what, name, value: res.headers.get(name) }).toEqual({ what, name, value });
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

describe('secrets', () => {
  test('no table of the database holds an API key or a session token, only their hashes', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const secrets = [ann.key, ann.token, bob.key, bob.token];
    for (const as of [ann, bob]) {
      for (const name of ['phone', 'laptop']) secrets.push((await ctx.json('auth/createApiKey', { name }, as)).body.key);
    }
    // Every table, so tables added by other domains later are read too.
    const dump = Object.values(await snapshotDb(ctx.store, { withLimits: true })).join('\n');
    expect(await tableNames(ctx.store)).toContain('api_keys');
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(40);
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice(3)); // the random part, without its pk_/ps_ prefix
    }
    const hashes = await ctx.query<{ hash: string }>(sql`SELECT hash FROM api_keys UNION ALL SELECT hash FROM sessions`);
    expect(hashes.length).toBe(secrets.length);
    for (const { hash } of hashes) expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('logs carry no key or token: successes that return a key, failures, 500s', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], log });
    const ann = ctx.users[0]!;
    const created = (await ctx.json('auth/createApiKey', { name: 'new' }, bearer(ann))).body.key as string;
    await ctx.call('preferences/get', {}, { 'x-api-key': created });
    await ctx.call('preferences/get', {}, { authorization: `Bearer ${ann.token}x` });
    await ctx.call('preferences/update', '{"enableMemories":', { cookie: `parley_session=${ann.token}` });
    await ctx.dropTable('api_keys'); // the next lookups fail inside the database: 500 with a logged cause
    // A key not used yet: a used one is answered from the credential cache without the database.
    expect((await ctx.call('preferences/get', {}, { 'x-api-key': ann.key })).status).toBe(500);
    await Bun.sleep(10);
    expect(lines.some((l) => l.includes('"level":"error"'))).toBe(true);
    const all = lines.join('\n');
    for (const secret of [created, ann.key, ann.token]) expect(all).not.toContain(secret);
  });
});

describe('secrets in URLs: one masking for every report, log and error', () => {
  // What must never be printed: URL user info and credential parameters of the settings.
  const SECRETS = ['ai-user-x1', 'aipass-x1', 'search-user-x2', 'hunter2-x2', 'tok-123', 'key-456', 'sig-789'];
  const config = {
    aiProvider: 'openai-chat',
    aiBaseUrl: 'http://ai-user-x1:aipass-x1@127.0.0.1:9/v1?api_key=key-456',
    searchProvider: 'searxng',
    searxngUrl: 'http://search-user-x2:hunter2-x2@127.0.0.1:9/?token=tok-123',
    imagesBaseUrl: 'http://127.0.0.1:9/v1?X-Amz-Signature=sig-789&X-Amz-Date=20260101T000000Z',
  } as const;
  const noSecret = (text: string) => expect(SECRETS.filter((s) => text.includes(s))).toEqual([]);

  test('admin/getSettings and admin/doctor (what `parley doctor` prints) show the servers, never their user info or `?token=`', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ users: [{ email: 'admin@example.org' }], config: config as never, log });
    const admin = ctx.users[0]!;
    await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
    const settings = (await ctx.json('admin/getSettings', {}, admin)).body;
    noSecret(JSON.stringify(settings));
    const value = (env: string) => settings.settings.find((s: { env: string }) => s.env === env).value;
    expect(value('PARLEY_SEARXNG_URL')).toBe('http://********:********@127.0.0.1:9/?token=********');
    expect(value('PARLEY_AI_BASE_URL')).toBe('http://********:********@127.0.0.1:9/v1?api_key=********');
    expect(value('PARLEY_IMAGES_BASE_URL')).toBe('http://127.0.0.1:9/v1?X-Amz-Signature=********&X-Amz-Date=********');
    const doctor = await ctx.json('admin/doctor', {}, admin);
    expect(doctor.status).toBe(200);
    // The checks do quote the servers (so there was something to mask) ...
    expect(JSON.stringify(doctor.body)).toContain('********:********@127.0.0.1:9');
    noSecret(JSON.stringify(doctor.body));
    await Bun.sleep(10);
    noSecret(lines.join('\n'));
  }, 30_000);

  test('the log and error messages that quote a URL', async () => {
    const { log, lines } = captureLog();
    const quoting = defineOperation({
      path: 'test/quoteUrl',
      summary: 'test-only: an error whose message quotes an upstream URL',
      input: t.Object({}),
      output: t.Object({}),
      errors: [502],
      handler: () => {
        throw new AppError('BAD_GATEWAY', { message: `The server at ${config.searxngUrl} failed.` });
      },
    });
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], log, extraOperations: [quoting] });
    const res = await ctx.json('test/quoteUrl', {}, ctx.users[0]!);
    expect(res.body.message).toBe('The server at http://********:********@127.0.0.1:9/?token=******** failed.');
    log.warn('upstream failed', { upstream: `POST ${config.aiBaseUrl} answered 500`, also: [config.imagesBaseUrl] });
    noSecret(lines.join('\n'));
    expect(lines.join('\n')).toContain('POST http://********:********@127.0.0.1:9/v1?api_key=******** answered 500');
  });

  test('what is a secret in a URL: user info, and parameters named like a credential; the rest as given', () => {
    for (const name of ['token', 'key', 'api_key', 'apikey', 'api-key', 'secret', 'client_secret', 'password', 'sslpassword', 'access_token', 'refresh_token', 'auth_token', 'sig', 'signature', 'code', 'X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Security-Token', 'x-amz-date', 'X-Goog-Signature', 'private_key', 'Token'])
      expect({ name, shown: maskUrl(`https://h.example/p?${name}=v4lue&q=owls`) }).toEqual({ name, shown: `https://h.example/p?${name}=********&q=owls` });
    for (const url of ['https://h.example/search?q=owls&format=json&page=2', 'postgres://h.example:5432/parley', 'http://[::1]:8080/v1'])
      expect(maskUrl(url)).toBe(url);
    expect(maskUrl('postgres://parley:s3cret@db.lan:5432/parley?sslmode=require&sslpassword=pw')).toBe('postgres://********:********@db.lan:5432/parley?sslmode=require&sslpassword=********');
    expect(maskUrl('http://user:pa ss@bad host/')).toBe('http://********:********@bad host/');
    expect(maskSecretsIn('cannot reach http://u:p@h.example/x?token=t (https://h.example/ok), then https://a:b@c.example.')).toBe(
      'cannot reach http://********:********@h.example/x?token=******** (https://h.example/ok), then https://********:********@c.example/.',
    );
  });
});

describe('cookies', () => {
  for (const secure of [false, true]) {
    test(`every Set-Cookie any operation sends is HttpOnly, SameSite=Lax${secure ? ', Secure' : ', not Secure'} (PARLEY_COOKIE_SECURE=${secure})`, async () => {
      const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { cookieSecure: secure } });
      let seen = 0;
      for (const op of operations) {
        // A fresh session each time: some operations (sign-out) end the one they are called with.
        const session = await ctx.store.write((tx) => createSession(tx, ctx.users[0]!.user.id, 86_400_000, {}, Date.now()));
        const res = await ctx.call(op.path, sampleValid(compileInput(op.input).schema), { authorization: `Bearer ${session.token}` });
        await res.body?.cancel();
        for (const c of res.headers.getSetCookie()) {
          seen++;
          expect(c).toContain('HttpOnly');
          expect(c).toContain('SameSite=Lax');
          expect(c).toContain('Path=/');
          if (secure) expect(c).toContain('Secure');
          else expect(c).not.toContain('Secure');
        }
      }
      expect(seen).toBeGreaterThan(0); // auth/signOut at least
    });

    test(`the sign-in flow's cookies too (PARLEY_COOKIE_SECURE=${secure}), and its redirect carries the security headers`, async () => {
      const ctx = await createTestContext({ config: { cookieSecure: secure, oauthGithubClientId: 'id', oauthGithubClientSecret: 'secret', publicUrl: 'http://localhost' } });
      const res = await ctx.app.handle(new Request('http://localhost/api/auth/oauth/github'));
      expect(res.status).toBe(302);
      expectSecurityHeaders(res, 'OAuth redirect');
      const cookies = res.headers.getSetCookie();
      expect(cookies.length).toBeGreaterThan(0);
      for (const c of cookies) {
        expect(c).toContain('HttpOnly');
        expect(c).toContain('SameSite=Lax');
        if (secure) expect(c).toContain('Secure');
        else expect(c).not.toContain('Secure');
      }
    });
  }
});

describe('security headers', () => {
  test('on successes, every error status, 404/405, public pages and event streams', async () => {
    const ctx = await createTestContext({
      users: [{ email: 'ann@example.org' }],
      config: { maxBodyBytes: 2048, rateLimitAi: { capacity: 1, perMs: 60_000 } },
      extraOperations: testOps,
    });
    const ann = ctx.users[0]!;
    const cases: [string, Promise<Response>, number][] = [
      ['200 JSON', ctx.call('preferences/get', {}, ann), 200],
      ['400', ctx.call('preferences/update', { enableMemories: 1 }, ann), 400],
      ['401', ctx.call('preferences/get', {}), 401],
      ['403', ctx.call('auth/revokeApiKey', { keyId: 'nope' }, ann), 403],
      ['404', ctx.call('nothing/here', {}, ann), 404],
      ['405', ctx.app.handle(new Request('http://localhost/api/preferences/get')), 405],
      ['413', ctx.call('auth/createApiKey', { name: 'x'.repeat(5000) }, ann), 413],
      ['415', ctx.app.handle(new Request('http://localhost/api/preferences/get', { method: 'POST', body: 'a=1', headers: { 'content-type': 'text/plain', 'x-api-key': ann.key } })), 415],
      ['health', ctx.app.handle(new Request('http://localhost/api/health')), 200],
      ['openapi', ctx.app.handle(new Request('http://localhost/api/openapi.json')), 200],
      ['docs', ctx.app.handle(new Request('http://localhost/api/docs')), 200],
      ['unknown GET', ctx.app.handle(new Request('http://localhost/nothing-here')), 404],
    ];
    for (const [what, pending, status] of cases) {
      const res = await pending;
      expect({ what, status: res.status }).toEqual({ what, status });
      expectSecurityHeaders(res, what);
      await res.body?.cancel();
    }
    await ctx.call('test/expensive', {}, ann);
    const limited = await ctx.call('test/expensive', {}, ann);
    expect(limited.status).toBe(429);
    expectSecurityHeaders(limited, '429');
    const stream = await ctx.call('test/stream', {}, ann);
    expect(stream.headers.get('content-type')).toStartWith('text/event-stream');
    expectSecurityHeaders(stream, 'SSE');
    await stream.body!.cancel();
    // A 500 from an unexpected throw.
    await ctx.dropTable('api_keys');
    const broken = await ctx.call('auth/listApiKeys', {}, bearer(ann));
    expect(broken.status).toBe(500);
    expectSecurityHeaders(broken, '500');
  });
});
