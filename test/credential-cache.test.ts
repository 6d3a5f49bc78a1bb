import { describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/db/connection';
import { DAY_MS } from '../src/time';
import { OTHER_WRITERS_CHECK_MS } from '../src/auth/credential-cache';
import { bearer, createTestContext, sqliteOnly, SPEC_ERRORS, type TestUser, type TestContext } from './helpers';

/**
 * Authenticated requests answer from a cache of resolved credentials (src/auth/credential-cache.ts).
 * Whatever the cache holds, a revoked, expired or changed credential must behave at once as
 * it did when every request read SQLite.
 */
async function fileContext(now?: () => number) {
  const ctx = await createTestContext({ durable: true, users: [{ email: 'ann@example.org' }], now });
  return { ctx, ann: ctx.users[0]! };
}

/**
 * A second connection to the context's SQLite file: what the admin CLI does from its own process.
 * Tests write through it with plain SQL: store functions would also clear this process's cache,
 * which the CLI's process cannot do. (SQLite's `data_version` tells the cache; on PostgreSQL the
 * cluster bus does, test/store-both.test.ts.)
 */
const otherConnection = (ctx: TestContext) => openDatabase(ctx.db.$client.filename);

/** Another process's commit is seen by requests starting `OTHER_WRITERS_CHECK_MS` after it. */
const afterOtherWriter = () => Bun.sleep(OTHER_WRITERS_CHECK_MS + 1);

const status = async (ctx: TestContext, as: TestUser | Record<string, string>) =>
  (await ctx.call('preferences/get', {}, as)).status;

describe('credential cache', () => {
  test('a key revoked over HTTP stops working a millisecond later', async () => {
    const { ctx, ann } = await fileContext();
    const { key, keyId } = (await ctx.json('auth/createApiKey', { name: 'phone' }, ann)).body;
    expect(await status(ctx, { 'x-api-key': key })).toBe(200);
    expect(await status(ctx, { 'x-api-key': key })).toBe(200);
    expect((await ctx.json('auth/revokeApiKey', { keyId }, ann)).status).toBe(200);
    expect(await status(ctx, { 'x-api-key': key })).toBe(401);
  });

  sqliteOnly('a key or session revoked by another connection (the CLI) stops working a millisecond later', async () => {
    const { ctx, ann } = await fileContext();
    const other = otherConnection(ctx);
    expect(await status(ctx, ann)).toBe(200);
    expect(await status(ctx, bearer(ann))).toBe(200);
    other.$client.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [Date.now(), ann.keyId]);
    await afterOtherWriter();
    expect(await status(ctx, ann)).toBe(401);
    expect(await status(ctx, bearer(ann))).toBe(200);
    other.$client.run('UPDATE sessions SET revoked_at = ? WHERE id = ?', [Date.now(), ann.sessionId]);
    await afterOtherWriter();
    expect(await status(ctx, bearer(ann))).toBe(401);
  });

  sqliteOnly('a user changed by another connection is seen a millisecond later', async () => {
    const { ctx, ann } = await fileContext();
    const other = otherConnection(ctx);
    expect((await ctx.json('preferences/getAccountType', {}, ann)).body.isLocked).toBe(false);
    other.$client.run('UPDATE users SET is_locked = 1 WHERE id = ?', [ann.user.id]);
    await afterOtherWriter();
    expect((await ctx.json('preferences/getAccountType', {}, ann)).body.isLocked).toBe(true);
    expect((await ctx.json('preferences/setAccountType', { accountType: 'STUDENT' }, ann)).status).toBe(403);
  });

  test('a change made through the API is seen by the same credential at once', async () => {
    const { ctx, ann } = await fileContext();
    expect((await ctx.json('preferences/get', {}, ann)).body.enableMemories).toBe(false);
    await ctx.json('preferences/update', { enableMemories: true }, ann);
    expect((await ctx.json('preferences/get', {}, ann)).body.enableMemories).toBe(true);
    expect((await ctx.json('preferences/get', {}, bearer(ann))).body.enableMemories).toBe(true);
  });

  test("a change to one user leaves other users' cached credentials in place", async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const memories = async (u: TestUser) => (await ctx.json('preferences/get', {}, u)).body.enableMemories;
    expect(await memories(bob)).toBe(false);
    // Behind the cache's back (same connection, no store function): what the cache holds shows.
    await ctx.query(sql`UPDATE users SET enable_memories = ${true} WHERE id = ${bob.user.id}`);
    expect(await memories(bob)).toBe(false);
    // Ann's change drops Ann's entries only.
    await ctx.json('preferences/update', { enableMemories: true }, ann);
    expect(await memories(bob)).toBe(false);
    expect(await memories(ann)).toBe(true);
    // Bob's own change, revoking one of his sessions, drops his.
    expect((await ctx.json('auth/signOut', {}, bearer(bob))).status).toBe(200);
    expect(await memories(bob)).toBe(true);
  });

  test('a cached session still expires, and its use still slides the expiry', async () => {
    let now = Date.now();
    const { ctx, ann } = await fileContext(() => now);
    const expiresAt = async () => Number((await ctx.query<{ e: number | string }>(sql`SELECT expires_at AS e FROM sessions WHERE id = ${ann.sessionId}`))[0]!.e);
    const ttl = ctx.deps.config.sessionTtlDays * DAY_MS;
    expect(await status(ctx, bearer(ann))).toBe(200);
    now += ttl - 1000;
    expect(await status(ctx, bearer(ann))).toBe(200); // slid: it now ends a full TTL from here
    expect(await expiresAt()).toBe(now + ttl);
    now += ttl + 1;
    expect((await ctx.json('preferences/get', {}, bearer(ann))).body).toEqual(SPEC_ERRORS[401]);
  });

  test("a cached key's last-used stamp still moves, at most once a minute", async () => {
    let now = Date.now();
    const { ctx, ann } = await fileContext(() => now);
    const lastUsed = async () => {
      const [{ t }] = (await ctx.query<{ t: number | string | null }>(sql`SELECT last_used_at AS t FROM api_keys WHERE id = ${ann.keyId}`)) as [{ t: number | string | null }];
      return t === null ? null : Number(t);
    };
    expect(await status(ctx, ann)).toBe(200);
    const first = await lastUsed();
    expect(first).toBe(now);
    now += 30_000;
    expect(await status(ctx, ann)).toBe(200);
    expect(await lastUsed()).toBe(first);
    now += 31_000;
    expect(await status(ctx, ann)).toBe(200);
    expect(await lastUsed()).toBe(now);
  });

  test('an API key sent as a bearer token is refused even once the key is cached', async () => {
    const { ctx, ann } = await fileContext();
    expect(await status(ctx, ann)).toBe(200);
    expect(await status(ctx, { authorization: `Bearer ${ann.key}` })).toBe(401);
    expect(await status(ctx, { 'x-api-key': ann.token })).toBe(401);
  });
});
