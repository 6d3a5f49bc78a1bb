import { describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { captureLog, createTestContext, until, type TestContext } from './helpers';
import { createConversation } from '../src/chat/conversation.store';
import { createResponse, setResponseStatus } from '../src/chat/response.store';
import { pruneExpired, pruneIfLeader, startPruning } from '../src/tasks/prune-expired';
import { DAY_MS } from '../src/time';
import { createSession } from '../src/auth/auth.store';

const countEvents = (ctx: TestContext) => ctx.count('response_events');

/** A response finished `ageDays` ago with one stored event. */
async function oldResponse(ctx: TestContext, ageDays: number) {
  const ann = ctx.users[0]!;
  const c = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 't' }));
  const r = await ctx.store.read((tx) => createResponse(tx, { conversationId: c.id, userId: ann.user.id, kind: 'chat', model: 'm', input: { message: 'x' } }));
  await ctx.store.write((tx) => setResponseStatus(tx, r.id, 'completed', Date.now() - ageDays * DAY_MS));
  const w = ctx.deps.events.writer(r.id, 0);
  w.emit({ type: 'text.delta', delta: 'a' });
  await w.flush();
}

describe('pruning', () => {
  test('a failing last part is logged; the earlier ones ran', async () => {
    const { log, lines } = captureLog();
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], log, config: { eventRetentionDays: 7 } });
    await oldResponse(ctx, 8);
    // The group part fails: its table is gone.
    await ctx.dropTable('group_invites');
    await pruneExpired(ctx.deps);
    expect(await countEvents(ctx)).toBe(0);
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.find((l) => l.msg === 'pruned response events')).toMatchObject({ events: 1 });
    expect(logged.find((l) => l.msg === 'pruning group events failed')?.cause).toContain('group_invites');
  });

  test('sessions that ended more than 30 days ago go; live and recently ended ones stay', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const now = Date.now();
    const session = async (expiresAt: number, revokedAt: number | null) => {
      const s = (await ctx.store.write((tx) => createSession(tx, ann.user.id, DAY_MS, {}, Date.now()))).row;
      await ctx.query(sql`UPDATE sessions SET expires_at = ${expiresAt}, revoked_at = ${revokedAt} WHERE id = ${s.id}`);
      return s.id;
    };
    const expiredLongAgo = await session(now - 31 * DAY_MS, null);
    const signedOutLongAgo = await session(now + 5 * DAY_MS, now - 40 * DAY_MS);
    const expiredLately = await session(now - 2 * DAY_MS, null);
    const signedOutLately = await session(now + 5 * DAY_MS, now - DAY_MS);
    await pruneExpired(ctx.deps);
    const left = (await ctx.query<{ id: string }>(sql`SELECT id FROM sessions`)).map((r) => r.id);
    expect(left).not.toContain(expiredLongAgo);
    expect(left).not.toContain(signedOutLongAgo);
    expect(left).toEqual(expect.arrayContaining([ann.sessionId, expiredLately, signedOutLately]));
  });

  test('a failing first part does not keep the later ones from running', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const group = (await ctx.json('groupChat/createGroupChat', { name: 'G' }, ann)).body;
    expect((await ctx.json('groupChat/createInvite', { groupChatId: group.id }, ann)).status).toBe(200);
    await ctx.query(sql`UPDATE group_invites SET expires_at = ${Date.now() - 1000}`);
    // The response part (first) fails: its table is gone.
    await ctx.dropTable('response_events');
    await pruneExpired(ctx.deps);
    expect(await ctx.count('group_invites')).toBe(0);
  });

  test('the first pass runs after start returns (the server listens first); stop cancels the rest', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { eventRetentionDays: 7 } });
    await oldResponse(ctx, 8);
    const stop = startPruning(ctx.deps, 20);
    expect(await countEvents(ctx)).toBe(1);
    await until(async () => (await countEvents(ctx)) === 0, 'the first pass');
    // Hourly in the server; every 20 ms here. After stop, nothing more is deleted.
    await oldResponse(ctx, 8);
    await until(async () => (await countEvents(ctx)) === 0, 'a later pass');
    stop();
    await oldResponse(ctx, 8);
    await Bun.sleep(60);
    expect(await countEvents(ctx)).toBe(1);
  });

  test('a stop before the first pass leaves everything', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { eventRetentionDays: 7 } });
    await oldResponse(ctx, 8);
    startPruning(ctx.deps)();
    await Bun.sleep(5);
    expect(await countEvents(ctx)).toBe(1);
  });

  test('two instances on one database: one prunes each period; the other takes over when the first stops renewing, or at once when it stops', async () => {
    let now = Date.now();
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { eventRetentionDays: 7 }, now: () => now });
    const a = { ...ctx.deps, instanceId: 'instance-a' };
    const b = { ...ctx.deps, instanceId: 'instance-b' };
    const hour = 3_600_000;
    await oldResponse(ctx, 8);
    expect(await pruneIfLeader(a, hour)).toBe(true);
    expect(await countEvents(ctx)).toBe(0);
    await oldResponse(ctx, 8);
    expect(await pruneIfLeader(b, hour)).toBe(false); // a holds the period
    expect(await countEvents(ctx)).toBe(1);
    now += hour;
    expect(await pruneIfLeader(a, hour)).toBe(true); // a renews: it keeps the work while it lives
    expect(await pruneIfLeader(b, hour)).toBe(false);
    now += hour; // a died without renewing: its lease ran out
    await oldResponse(ctx, 8);
    expect(await pruneIfLeader(b, hour)).toBe(true);
    expect(await countEvents(ctx)).toBe(0);
    // A clean stop gives the lease up: the other instance prunes at its next pass.
    const stop = startPruning(b, hour);
    stop(); // lets the lease go (on PostgreSQL a write still on its way when stop returns)
    await until(() => pruneIfLeader(a, hour), 'the lease given up');
  });
});
