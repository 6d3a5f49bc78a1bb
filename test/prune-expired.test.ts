import { describe, expect, test } from 'bun:test';
import { writeOnSqlite, runOnSqlite } from '../src/db/store';
import { captureLog, createTestContext } from './helpers';
import { createConversation } from '../src/chat/conversation.store';
import { createResponse, setResponseStatus } from '../src/chat/response.store';
import { pruneExpired, pruneIfLeader, startPruning } from '../src/tasks/prune-expired';
import { DAY_MS } from '../src/time';
import { createSession } from '../src/auth/auth.store';

const countEvents = (ctx: ReturnType<typeof createTestContext>) =>
  ctx.db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM response_events').get()!.n;

/** A response finished `ageDays` ago with one stored event. */
async function oldResponse(ctx: ReturnType<typeof createTestContext>, ageDays: number) {
  const ann = ctx.users[0]!;
  const c = runOnSqlite(ctx.db, (tx) => createConversation(tx, { ownerId: ann.user.id, title: 't' }));
  const r = runOnSqlite(ctx.db, (tx) => createResponse(tx, { conversationId: c.id, userId: ann.user.id, kind: 'chat', model: 'm', input: { message: 'x' } }));
  writeOnSqlite(ctx.db, (tx) => setResponseStatus(tx, r.id, 'completed', Date.now() - ageDays * DAY_MS));
  const w = ctx.deps.events.writer(r.id, 0);
  w.emit({ type: 'text.delta', delta: 'a' });
  await w.flush();
}

describe('pruning', () => {
  test('a failing last part is logged; the earlier ones ran', async () => {
    const { log, lines } = captureLog();
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }], log, config: { eventRetentionDays: 7 } });
    await oldResponse(ctx, 8);
    // The group part fails: its table is gone.
    ctx.db.$client.exec('DROP TABLE group_invites');
    await pruneExpired(ctx.deps);
    expect(countEvents(ctx)).toBe(0);
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.find((l) => l.msg === 'pruned response events')).toMatchObject({ events: 1 });
    expect(logged.find((l) => l.msg === 'pruning group events failed')?.cause).toContain('group_invites');
  });

  test('sessions that ended more than 30 days ago go; live and recently ended ones stay', async () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const now = Date.now();
    const session = (expiresAt: number, revokedAt: number | null) => {
      const s = writeOnSqlite(ctx.db, (tx) => createSession(tx, ann.user.id, DAY_MS, {}, Date.now())).row;
      ctx.db.$client.run('UPDATE sessions SET expires_at = ?, revoked_at = ? WHERE id = ?', [expiresAt, revokedAt, s.id]);
      return s.id;
    };
    const expiredLongAgo = session(now - 31 * DAY_MS, null);
    const signedOutLongAgo = session(now + 5 * DAY_MS, now - 40 * DAY_MS);
    const expiredLately = session(now - 2 * DAY_MS, null);
    const signedOutLately = session(now + 5 * DAY_MS, now - DAY_MS);
    await pruneExpired(ctx.deps);
    const left = ctx.db.$client.query<{ id: string }, []>('SELECT id FROM sessions').all().map((r) => r.id);
    expect(left).not.toContain(expiredLongAgo);
    expect(left).not.toContain(signedOutLongAgo);
    expect(left).toEqual(expect.arrayContaining([ann.sessionId, expiredLately, signedOutLately]));
  });

  test('a failing first part does not keep the later ones from running', async () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const group = (await ctx.json('groupChat/createGroupChat', { name: 'G' }, ann)).body;
    expect((await ctx.json('groupChat/createInvite', { groupChatId: group.id }, ann)).status).toBe(200);
    ctx.db.$client.run('UPDATE group_invites SET expires_at = ?', [Date.now() - 1000]);
    // The response part (first) fails: its table is gone.
    ctx.db.$client.exec('DROP TABLE response_events');
    await pruneExpired(ctx.deps);
    expect(ctx.db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM group_invites').get()!.n).toBe(0);
  });

  test('the first pass runs after start returns (the server listens first); stop cancels the rest', async () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }], config: { eventRetentionDays: 7 } });
    await oldResponse(ctx, 8);
    const stop = startPruning(ctx.deps, 20);
    expect(countEvents(ctx)).toBe(1);
    await Bun.sleep(5);
    expect(countEvents(ctx)).toBe(0);
    // Hourly in the server; every 20 ms here. After stop, nothing more is deleted.
    await oldResponse(ctx, 8);
    await Bun.sleep(60);
    expect(countEvents(ctx)).toBe(0);
    stop();
    await oldResponse(ctx, 8);
    await Bun.sleep(60);
    expect(countEvents(ctx)).toBe(1);
  });

  test('a stop before the first pass leaves everything', async () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }], config: { eventRetentionDays: 7 } });
    await oldResponse(ctx, 8);
    startPruning(ctx.deps)();
    await Bun.sleep(5);
    expect(countEvents(ctx)).toBe(1);
  });

  test('two instances on one database: one prunes each period; the other takes over when the first stops renewing, or at once when it stops', async () => {
    let now = Date.now();
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }], config: { eventRetentionDays: 7 }, now: () => now });
    const a = { ...ctx.deps, instanceId: 'instance-a' };
    const b = { ...ctx.deps, instanceId: 'instance-b' };
    const hour = 3_600_000;
    await oldResponse(ctx, 8);
    expect(await pruneIfLeader(a, hour)).toBe(true);
    expect(countEvents(ctx)).toBe(0);
    await oldResponse(ctx, 8);
    expect(await pruneIfLeader(b, hour)).toBe(false); // a holds the period
    expect(countEvents(ctx)).toBe(1);
    now += hour;
    expect(await pruneIfLeader(a, hour)).toBe(true); // a renews: it keeps the work while it lives
    expect(await pruneIfLeader(b, hour)).toBe(false);
    now += hour; // a died without renewing: its lease ran out
    await oldResponse(ctx, 8);
    expect(await pruneIfLeader(b, hour)).toBe(true);
    expect(countEvents(ctx)).toBe(0);
    // A clean stop gives the lease up: the other instance prunes at its next pass.
    const stop = startPruning(b, hour);
    stop();
    expect(await pruneIfLeader(a, hour)).toBe(true);
  });
});
