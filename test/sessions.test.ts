import { describe, expect, test } from 'bun:test';
import { writeOnSqlite } from '../src/db/store';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, bearer, cookie, SPEC_ERRORS, describeSqliteOnly } from './helpers';
import { createSession, revokeSession } from '../src/auth/auth.store';
import { DAY_MS } from '../src/time';
import { createUser } from '../src/account/account.store';
import { openDataDir } from '../src/db/connection';
import { migrate } from '../src/db/migrate';

describe('auth/listSessions and auth/revokeSession', () => {
  test("lists the caller's active sessions, marks the current one, never shows a token", async () => {
    let now = Date.now();
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], now: () => now });
    const [ann] = ctx.users as [any];
    const phone = await ctx.store.write((tx) => createSession(tx, ann.user.id, DAY_MS, { userAgent: 'phone' }, now - 1000));
    const gone = await ctx.store.write((tx) => createSession(tx, ann.user.id, DAY_MS, {}, now));
    await ctx.store.write((tx) => revokeSession(tx, gone.row.id, now));
    await ctx.store.write((tx) => createSession(tx, ann.user.id, 1, {}, now - 10)); // already expired
    now += 1;

    const viaSession = await ctx.json('auth/listSessions', {}, bearer(ann));
    expect(viaSession.status).toBe(200);
    const list = viaSession.body.sessions;
    expect(list.map((s: any) => s.sessionId).sort()).toEqual([ann.sessionId, phone.row.id].sort());
    expect(list.find((s: any) => s.sessionId === ann.sessionId).current).toBe(true);
    const other = list.find((s: any) => s.sessionId === phone.row.id);
    expect(other).toEqual({
      sessionId: phone.row.id,
      createdAt: new Date(now - 1001).toISOString(),
      lastUsedAt: new Date(now - 1001).toISOString(),
      expiresAt: new Date(now - 1001 + DAY_MS).toISOString(),
      userAgent: 'phone',
      current: false,
    });
    expect(JSON.stringify(viaSession.body)).not.toContain(phone.token);
    // with an API key no session is current
    expect((await ctx.json('auth/listSessions', {}, ann)).body.sessions.every((s: any) => !s.current)).toBe(true);
  });

  test('revokeSession: own → success and the token stops working; foreign or unknown → 403; twice → success', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
    const [ann, bob] = ctx.users as [any, any];
    const phone = await ctx.store.write((tx) => createSession(tx, ann.user.id, DAY_MS, {}, Date.now()));
    expect((await ctx.json('auth/revokeSession', { sessionId: bob.sessionId }, ann)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('auth/revokeSession', { sessionId: 'nope' }, ann)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('preferences/get', {}, bearer(bob))).status).toBe(200);

    const res = await ctx.call('auth/revokeSession', { sessionId: phone.row.id }, bearer(ann));
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toBeNull(); // another device: this one stays signed in
    expect((await ctx.json('preferences/get', {}, { authorization: `Bearer ${phone.token}` })).body).toEqual(SPEC_ERRORS[401]);
    expect((await ctx.json('auth/revokeSession', { sessionId: phone.row.id }, ann)).body).toEqual({ success: true });
    expect((await ctx.json('auth/revokeSession', {}, ann)).status).toBe(400);
    expect((await ctx.json('auth/revokeSession', { sessionId: phone.row.id })).body).toEqual(SPEC_ERRORS[401]);
  });

  test('revoking the calling session clears the cookie', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const res = await ctx.call('auth/revokeSession', { sessionId: ann.sessionId }, cookie(ann));
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toContain('parley_session=;');
    expect(res.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await ctx.json('auth/getSession', {}, cookie(ann))).status).toBe(401);
  });
});

const root = new URL('..', import.meta.url).pathname;
function parley(args: string[]) {
  const p = Bun.spawnSync([process.execPath, join(root, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '' }, stdout: 'pipe', stderr: 'pipe' });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

// The CLI on a data directory's SQLite file, seeded through a connection to it.
describeSqliteOnly('parley session list / revoke', () => {
  test('lists active sessions without tokens and revokes one by id', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-sessions-'));
    const d = ['--data-dir', dir];
    // Seed through the stores (each CLI spawn costs most of a second).
    const db = openDataDir(dir);
    migrate(db.$client);
    const ann = writeOnSqlite(db, (tx) => createUser(tx, { email: 'ann@example.org' }, Date.now()));
    const a = writeOnSqlite(db, (tx) => createSession(tx, ann.id, DAY_MS, { userAgent: 'parley-cli' }, Date.now()));
    const b = writeOnSqlite(db, (tx) => createSession(tx, ann.id, DAY_MS, { userAgent: 'parley-cli' }, Date.now()));
    db.$client.close();
    const [aId, bId] = [a.row.id, b.row.id];
    const listed = parley(['session', 'list', '--email', 'ann@example.org', '--json', ...d]);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.out);
    expect(rows.map((r: any) => r.sessionId).sort()).toEqual([aId, bId].sort());
    expect(rows[0].userAgent).toBe('parley-cli');
    expect(listed.out).not.toContain(a.token);

    const revoked = parley(['session', 'revoke', aId, ...d]);
    expect(revoked.code).toBe(0);
    expect(revoked.out).toContain(`revoked ${aId}`);
    const after = JSON.parse(parley(['session', 'list', '--email', 'ann@example.org', '--json', ...d]).out);
    expect(after.map((r: any) => r.sessionId)).toEqual([bId]);

    const unknown = parley(['session', 'revoke', 'nope', ...d]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toContain('no session');
  }, 30_000);
});
