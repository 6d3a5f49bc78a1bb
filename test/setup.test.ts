import { describe, expect, test } from 'bun:test';
import { createTestContext, seedUser, type TestContext } from './helpers';
import { createSetupToken, peekSetupToken, pruneSetupTokens } from '../src/setup/setup.store';
import { allRows } from '../src/db/work';
import { hashSecret } from '../src/auth/tokens';
import { listUsers, updateUser } from '../src/account/account.store';

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1, 10);

async function world(opts: { sameDatabaseAs?: TestContext } = {}) {
  let now = T0;
  const ctx = await createTestContext({ now: () => now, ...opts });
  const link = async (ttl = 60 * MIN) => (await ctx.store.write((tx) => createSetupToken(tx, ttl, now))).token;
  return { ctx, link, advance: (ms: number) => (now += ms) };
}

const cookieOf = (res: Response) => /parley_session=(ps_[^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
const ADMIN = { name: 'Ann', email: 'ann@example.org' };

describe('the first admin, through a setup link', () => {
  test('stored hashed; checked without being used; used once: the admin is made, signed in by the cookie, and the same link is then refused', async () => {
    const { ctx, link } = await world();
    expect((await ctx.json('setup/getStatus', {})).body).toEqual({ needsSetup: true });
    const token = await link();
    const rows = await ctx.store.read(function* ({ db, t }) {
      return yield* allRows(db.select().from(t.setupTokens));
    });
    expect(rows.map((r) => r.hash)).toEqual([hashSecret(token)]);
    expect(JSON.stringify(rows)).not.toContain(token);

    for (let i = 0; i < 2; i++) expect(await ctx.json('setup/checkToken', { token })).toMatchObject({ status: 200, body: { expiresAt: new Date(T0 + 60 * MIN).toISOString() } });
    const made = await ctx.json('setup/createAdmin', { token, ...ADMIN });
    expect(made.status).toBe(200);
    expect(made.body.user).toMatchObject({ email: 'ann@example.org', name: 'Ann', isAdmin: true });
    const session = cookieOf(made.res);
    expect(made.res.headers.get('set-cookie')).toContain('HttpOnly');
    const me = await ctx.json('auth/getSession', {}, { cookie: `parley_session=${session}` });
    expect(me.body.user).toMatchObject({ email: 'ann@example.org', isAdmin: true });
    expect((await ctx.json('setup/getStatus', {})).body).toEqual({ needsSetup: false });

    const again = await ctx.json('setup/createAdmin', { token, name: 'Mallory', email: 'mallory@example.org' });
    expect(again.status).toBe(410);
    expect(again.body).toMatchObject({ code: 'GONE', data: { reason: 'used' } });
    expect(again.body.message).toContain('already used');
    expect(again.res.headers.get('set-cookie')).toBeNull();
    expect((await ctx.json('setup/checkToken', { token })).body.data).toEqual({ reason: 'used' });
    expect((await ctx.store.read((tx) => listUsers(tx))).map((u) => u.email)).toEqual(['ann@example.org']);
  });

  test('an expired link is refused, and says so', async () => {
    const { ctx, link, advance } = await world();
    const token = await link(10 * MIN);
    advance(10 * MIN);
    for (const op of ['setup/checkToken', 'setup/createAdmin']) {
      const res = await ctx.json(op, { token, ...ADMIN });
      expect(res.status).toBe(410);
      expect(res.body.data).toEqual({ reason: 'expired' });
      expect(res.body.message).toContain('parley setup-link');
    }
    expect(await ctx.count('users')).toBe(0);
  });

  test('a wrong link is refused: cut short, or one Parley never made', async () => {
    const { ctx, link } = await world();
    const token = await link();
    for (const wrong of [token.slice(0, -1), `psu_${'A'.repeat(43)}`, 'pl_' + token.slice(4), '']) {
      const res = await ctx.json('setup/createAdmin', { token: wrong, ...ADMIN });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', data: { reason: 'unknown' } });
    }
    expect(await ctx.count('users')).toBe(0);
    expect((await ctx.json('setup/checkToken', { token })).status).toBe(200);
  });

  test('refused once the server has an admin (made with the CLI meanwhile); the link stays unused', async () => {
    const { ctx, link } = await world();
    const token = await link();
    const root = await seedUser(ctx.store, { email: 'root@example.org' });
    await ctx.store.write((tx) => updateUser(tx, root.user.id, { isAdmin: true }, T0));
    for (const op of ['setup/checkToken', 'setup/createAdmin']) {
      const res = await ctx.json(op, { token, ...ADMIN });
      expect(res.status).toBe(410);
      expect(res.body.data).toEqual({ reason: 'done' });
      expect(res.body.message).toContain('already has an admin');
    }
    expect((await ctx.store.read((tx) => peekSetupToken(tx, token, T0))).ok).toBe(true);
    expect(await ctx.count('users')).toBe(1);
    expect((await ctx.json('setup/getStatus', {})).body).toEqual({ needsSetup: false });
  });

  test('a user who already has the e-mail address becomes the admin (name kept); a bad address is 400 and leaves the link usable', async () => {
    const { ctx, link } = await world();
    await seedUser(ctx.store, { email: 'ann@example.org', name: 'Ann Original' });
    expect((await ctx.json('setup/getStatus', {})).body).toEqual({ needsSetup: true });
    const token = await link();
    const bad = await ctx.json('setup/createAdmin', { token, name: 'Ann', email: 'not an address' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('not an e-mail address');
    const made = await ctx.json('setup/createAdmin', { token, name: 'Someone Else', email: ' ANN@example.org ' });
    expect(made.status).toBe(200);
    expect(made.body.user).toMatchObject({ email: 'ann@example.org', name: 'Ann Original', isAdmin: true });
    expect(await ctx.count('users')).toBe(1);
  });

  test('several instances on one database: a link made by one works on another, and two links used at once make one admin', async () => {
    const a = await world();
    const b = await world({ sameDatabaseAs: a.ctx });
    const fromA = await a.link();
    const fromB = await b.link();
    const [first, second] = await Promise.all([
      b.ctx.json('setup/createAdmin', { token: fromA, name: 'Ann', email: 'ann@example.org' }),
      a.ctx.json('setup/createAdmin', { token: fromB, name: 'Bob', email: 'bob@example.org' }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 410]);
    expect([first, second].find((r) => r.status === 410)!.body.data).toEqual({ reason: 'done' });
    const admins = (await a.ctx.store.read((tx) => listUsers(tx))).filter((u) => u.isAdmin);
    expect(admins).toHaveLength(1);
  });

  test('retention drops the links used or expired before the time it is given', async () => {
    const { ctx, link } = await world();
    const used = await link();
    await link(MIN);
    await link(); // still good
    expect((await ctx.json('setup/createAdmin', { token: used, ...ADMIN })).status).toBe(200);
    expect(await ctx.store.read((tx) => pruneSetupTokens(tx, T0 + 2 * MIN))).toBe(2); // the used one and the expired one
    expect(await ctx.store.read((tx) => pruneSetupTokens(tx, T0 + 2 * 60 * MIN))).toBe(1);
    expect(await ctx.count('setup_tokens')).toBe(0);
  });
});
