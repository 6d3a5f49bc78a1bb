import { describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createTestContext, bearer, SPEC_ERRORS } from './helpers';
import { DAY_MS } from '../src/time';

describe('auth', () => {
  test('createApiKey shows the key once; it works; the table holds only its hash', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const { status, body } = await ctx.json('auth/createApiKey', { name: 'laptop' }, ann);
    expect(status).toBe(200);
    expect(body).toEqual({ keyId: expect.any(String), key: expect.stringMatching(/^pk_/), name: 'laptop', prefix: body.key.slice(0, 9), createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    expect((await ctx.json('preferences/get', {}, { 'x-api-key': body.key })).status).toBe(200);
    const dump = JSON.stringify(await ctx.query(sql`SELECT * FROM api_keys`)) + JSON.stringify(await ctx.query(sql`SELECT * FROM sessions`));
    expect(dump).not.toContain(body.key);
    expect(dump).not.toContain(ann.token);
    const list = await ctx.json('auth/listApiKeys', {}, ann);
    expect(list.body.keys.map((k: any) => k.name).sort()).toEqual(['laptop', 'test']);
    expect(JSON.stringify(list.body)).not.toContain(body.key);
  });

  test('revokeApiKey: own key → success and the key stops working; foreign or unknown → 403', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
    const [ann, bob] = ctx.users as [any, any];
    const foreign = await ctx.json('auth/revokeApiKey', { keyId: bob.keyId }, ann);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('auth/revokeApiKey', { keyId: 'no-such-key' }, ann)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('preferences/get', {}, bob)).status).toBe(200);

    const own = await ctx.json('auth/revokeApiKey', { keyId: ann.keyId }, bearer(ann));
    expect(own).toMatchObject({ status: 200, body: { success: true } });
    expect((await ctx.json('preferences/get', {}, ann)).body).toEqual(SPEC_ERRORS[401]);
    const again = await ctx.json('auth/revokeApiKey', { keyId: ann.keyId }, bearer(ann));
    expect(again.body).toEqual({ success: true });
    const listed = await ctx.json('auth/listApiKeys', {}, bearer(ann));
    expect(listed.body.keys[0].revokedAt).toEqual(expect.any(String));
  });

  test('sessions expire, and use slides the expiry forward', async () => {
    let now = Date.now();
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], now: () => now, config: { sessionTtlDays: 1 } });
    const ann = ctx.users[0]!;
    now += 0.9 * DAY_MS;
    expect((await ctx.json('preferences/get', {}, bearer(ann))).status).toBe(200);
    now += 0.9 * DAY_MS; // 1.8 days after creation, 0.9 after last use
    expect((await ctx.json('preferences/get', {}, bearer(ann))).status).toBe(200);
    now += 1.1 * DAY_MS;
    expect((await ctx.json('preferences/get', {}, bearer(ann))).body).toEqual(SPEC_ERRORS[401]);
  });

  test('signOut ends the session and clears the cookie', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { cookieSecure: true } });
    const ann = ctx.users[0]!;
    const res = await ctx.call('auth/signOut', {}, bearer(ann));
    expect(res.status).toBe(200);
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toContain('parley_session=;');
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Max-Age=0');
    expect(setCookie).toContain('Secure');
    expect((await ctx.json('preferences/get', {}, bearer(ann))).status).toBe(401);
    // an API key caller can sign out too; the key stays valid
    expect((await ctx.json('auth/signOut', {}, ann)).body).toEqual({ success: true });
    expect((await ctx.json('preferences/get', {}, ann)).status).toBe(200);
  });

  test('getSession names the credential', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }] });
    const ann = ctx.users[0]!;
    expect((await ctx.json('auth/getSession', {}, ann)).body.credential).toEqual({ kind: 'apiKey', id: ann.keyId });
    const s = await ctx.json('auth/getSession', {}, bearer(ann));
    expect(s.body.credential).toEqual({ kind: 'session', id: ann.sessionId });
    expect(s.body.user).toMatchObject({ email: 'ann@example.org', name: 'Ann', accountType: 'GENERAL', subscription: { tier: 'FREE' } });
  });
});

test('a malformed cookie escape is an unknown credential (401), not a 500', async () => {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
  const res = await ctx.json('preferences/get', {}, { cookie: 'other=%E0%A4%A; parley_session=%zz' });
  expect(res.body).toEqual(SPEC_ERRORS[401]);
});
