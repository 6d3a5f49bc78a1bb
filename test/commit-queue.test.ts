import { runOnSqlite, writeOnSqlite } from '../src/db/store';
import { describe, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDataDir, writeTx, type Db } from '../src/db/connection';
import { drainWrites, queuedWrite } from '../src/db/commit-queue';
import { findGroupById } from '../src/groups/group.store';
import type { Tx } from '../src/db/work';
import { leaveGroup, sendGroupMessage } from '../src/groups/group.service';
import { migrate } from '../src/db/migrate';
import { createTestContext, describeSqliteOnly, sqliteOnly } from './helpers';
import { createConversation } from '../src/chat/conversation.store';
import { appendEvents, createResponse, eventsAfter, findResponseById } from '../src/chat/response.store';

/** A database file, the connection under test, a second connection (what another process sees), and a BEGIN counter. */
function twoConnections() {
  const dir = join(mkdtempSync(join(tmpdir(), 'parley-commits-')), 'data');
  const db = openDataDir(dir);
  db.$client.run('CREATE TABLE t (v TEXT NOT NULL UNIQUE)');
  const other = openDataDir(dir);
  const begins = { n: 0 };
  const run = db.$client.run.bind(db.$client);
  db.$client.run = ((sql: string, ...rest: unknown[]) => {
    if (sql === 'BEGIN IMMEDIATE') begins.n++;
    return (run as (...a: unknown[]) => unknown)(sql, ...rest);
  }) as typeof db.$client.run;
  const seen = () => (other.$client.query('SELECT v FROM t ORDER BY rowid').all() as { v: string }[]).map((r) => r.v);
  return { db, other, begins, seen };
}

const insert = (db: Db, v: string) => () => {
  db.$client.run('INSERT INTO t (v) VALUES (?)', [v]);
  return v;
};

// SQLite's commit queue: one transaction per turn of the event loop, a savepoint per job
// (src/db/commit-queue.ts). On PostgreSQL `queued` is a plain `write`.
describeSqliteOnly('commit queue', () => {
  test('writes queued in one turn commit together, and each caller hears only after the commit', async () => {
    const { db, begins, seen } = twoConnections();
    const answered: string[][] = [];
    const pending = ['a', 'b', 'c'].map((v) => queuedWrite(db, insert(db, v)).then(() => answered.push(seen())));
    expect(seen()).toEqual([]); // nothing runs before the turn ends
    await Promise.all(pending);
    expect(begins.n).toBe(1);
    expect(answered).toEqual([['a', 'b', 'c'], ['a', 'b', 'c'], ['a', 'b', 'c']]);
    await queuedWrite(db, insert(db, 'd'));
    expect(begins.n).toBe(2);
  });

  test('a job that throws rolls back alone; the others commit', async () => {
    const { db, seen } = twoConnections();
    const results = await Promise.allSettled([
      queuedWrite(db, insert(db, 'a')),
      queuedWrite(db, () => {
        insert(db, 'half')();
        insert(db, 'a')(); // UNIQUE violation: 'half' must go too
      }),
      queuedWrite(db, insert(db, 'b')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toContain('UNIQUE');
    expect(seen()).toEqual(['a', 'b']);
  });

  test('afterCommit runs after the commit, in queue order; one that throws rejects its own job only', async () => {
    const { db, seen } = twoConnections();
    const order: string[] = [];
    const results = await Promise.allSettled([
      queuedWrite(db, insert(db, 'a'), (v) => order.push(`${v}:${seen().join('')}`)),
      queuedWrite(db, insert(db, 'b'), () => {
        throw new Error('publish failed');
      }),
      queuedWrite(db, insert(db, 'c'), (v) => order.push(`${v}:${seen().join('')}`)),
    ]);
    expect(order).toEqual(['a:abc', 'c:abc']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(seen()).toEqual(['a', 'b', 'c']); // b's write is committed all the same
  });

  test('an error that ends the whole transaction (disk full) fails every job of the batch, and the queue goes on', async () => {
    const { db, seen } = twoConnections();
    const pages = (db.$client.query('PRAGMA page_count').get() as { page_count: number }).page_count;
    db.$client.run(`PRAGMA max_page_count = ${pages + 3}`);
    const results = await Promise.allSettled([
      queuedWrite(db, insert(db, 'a')),
      queuedWrite(db, () => db.$client.run('INSERT INTO t (v) VALUES (randomblob(200000))')),
      queuedWrite(db, insert(db, 'c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/full/i);
    expect(seen()).toEqual([]);
    db.$client.run('PRAGMA max_page_count = 1073741823');
    expect(await queuedWrite(db, insert(db, 'd'))).toBe('d');
    expect(seen()).toEqual(['d']);
  });

  test('drainWrites commits what is queued at once (shutdown)', async () => {
    const { db, seen } = twoConnections();
    const done = queuedWrite(db, insert(db, 'a'));
    drainWrites(db);
    expect(seen()).toEqual(['a']);
    expect(await done).toBe('a');
  });

  test('a message from a member who leaves before the batch runs is refused, and nothing is stored', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'parley-commits-')), 'data');
    const db = openDataDir(dir);
    migrate(db.$client);
    const ctx = await createTestContext({ db, users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
    const [ann, bob] = ctx.users;
    const created = (await ctx.json('groupChat/createGroupChat', { name: 'g' }, ann)).body;
    const invite = (await ctx.json('groupChat/createInvite', { groupChatId: created.id }, ann)).body;
    expect((await ctx.json('groupChat/joinGroup', { code: invite.code }, bob)).status).toBe(200);
    const group = runOnSqlite(db, (tx) => findGroupById(tx, created.id))!;
    const member = function* (tx: Tx) {
      const g = (yield* findGroupById(tx, created.id))!;
      const isMember = db.$client.query('SELECT 1 FROM group_members WHERE group_id = ? AND user_id = ?').get(g.id, bob!.user.id);
      if (!isMember) throw new Error('not a member');
      return g;
    };
    const sending = sendGroupMessage(ctx.deps, member, bob!.user, 'too late');
    const leaving = leaveGroup(ctx.deps, group, bob!.user); // its write runs now, before the queued write's turn
    await expect(sending).rejects.toThrow('not a member');
    expect(await leaving).toBe(true);
    const stored = db.$client.query("SELECT count(*) AS n FROM conversation_items WHERE content = 'too late'").get() as { n: number };
    expect(stored.n).toBe(0);
  });
});

describe('response events through the commit queue', () => {
  // The shared commit is SQLite's (counted by its BEGINs).
  sqliteOnly('responses streaming at once share one commit; one failing costs the others nothing, and it hears on its next emit', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const begins = { n: 0 };
    const run = ctx.db.$client.run.bind(ctx.db.$client);
    ctx.db.$client.run = ((sql: string, ...rest: unknown[]) => {
      if (sql === 'BEGIN IMMEDIATE') begins.n++;
      return (run as (...a: unknown[]) => unknown)(sql, ...rest);
    }) as typeof ctx.db.$client.run;
    const c = runOnSqlite(ctx.db, (tx) => createConversation(tx, { ownerId: ann.user.id }));
    const ids = [0, 1, 2].map(() => runOnSqlite(ctx.db, (tx) => createResponse(tx, { conversationId: c.id, userId: ann.user.id, kind: 'chat', model: 'm', input: { message: 'x' } })).id);
    const writers = ids.map((id) => ctx.deps.events.writer(id, 0));
    // A writer whose response is gone: its events break the foreign key.
    const orphan = ctx.deps.events.writer('no-such-response', 0);
    for (const w of [...writers, orphan]) for (let i = 0; i < 3; i++) w.emit({ type: 'text.delta', delta: `${i}` });
    await Bun.sleep(0);
    await Bun.sleep(0);
    expect(begins.n).toBe(1);
    for (const id of ids) expect(runOnSqlite(ctx.db, (tx) => eventsAfter(tx, id, 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(() => orphan.emit({ type: 'text.delta', delta: 'x' })).toThrow(/FOREIGN KEY/);
  });

  // Asks SQLite's one connection whether it is inside a transaction when events are published.
  sqliteOnly('events a unit of work writes are published once it commits, however many', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const c = runOnSqlite(ctx.db, (tx) => createConversation(tx, { ownerId: ann.user.id }));
    const id = runOnSqlite(ctx.db, (tx) => createResponse(tx, { conversationId: c.id, userId: ann.user.id, kind: 'chat', model: 'm', input: { message: 'x' } })).id;
    const published: { n: number; inTransaction: boolean }[] = [];
    ctx.deps.events.subscribe(id, (batch) => published.push({ n: batch.length, inTransaction: ctx.db.$client.inTransaction }));
    const w = ctx.deps.events.writer(id, 0);
    writeOnSqlite(ctx.db, function* (tx) {
      for (let i = 0; i < 600; i++) w.add({ type: 'text.delta', delta: 'x' });
      yield* w.writeIn(tx);
      expect(published).toEqual([]);
    });
    expect(published).toEqual([{ n: 600, inTransaction: false }]);
    expect(runOnSqlite(ctx.db, (tx) => eventsAfter(tx, id, 0))).toHaveLength(600);
  });

  // Fails SQLite's shared COMMIT.
  sqliteOnly('when the shared transaction fails as a whole, each response writes its batch alone: nothing lost, nothing sent twice', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const c = runOnSqlite(ctx.db, (tx) => createConversation(tx, { ownerId: ann.user.id }));
    const ids = [0, 1, 2].map(() => runOnSqlite(ctx.db, (tx) => createResponse(tx, { conversationId: c.id, userId: ann.user.id, kind: 'chat', model: 'm', input: { message: 'x' } })).id);
    const seen: number[][] = ids.map(() => []);
    ids.forEach((id, i) => ctx.deps.events.subscribe(id, (batch) => seen[i]!.push(...batch.map((e) => e.seq))));
    // The next COMMIT fails, as on a full disk or an I/O error.
    let failNext = true;
    const run = ctx.db.$client.run.bind(ctx.db.$client);
    ctx.db.$client.run = ((sql: string, ...rest: unknown[]) => {
      if (sql === 'COMMIT' && failNext) {
        failNext = false;
        throw new Error('disk I/O error');
      }
      return (run as (...a: unknown[]) => unknown)(sql, ...rest);
    }) as typeof ctx.db.$client.run;
    const writers = ids.map((id) => ctx.deps.events.writer(id, 0));
    for (const w of writers) for (let i = 0; i < 3; i++) w.emit({ type: 'text.delta', delta: `${i}` });
    await Bun.sleep(5);
    expect(failNext).toBe(false);
    for (const w of writers) w.emit({ type: 'text.delta', delta: 'after' }); // no writer was poisoned
    await Bun.sleep(5);
    for (const [i, id] of ids.entries()) {
      expect(runOnSqlite(ctx.db, (tx) => eventsAfter(tx, id, 0)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(seen[i]).toEqual([1, 2, 3, 4]);
    }
  });

  test("a batch written late (put back after a failed shared commit) does not move a response's last number backwards", async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const c = await ctx.store.read((tx) => createConversation(tx, { ownerId: ctx.users[0]!.user.id }));
    const { id } = await ctx.store.read((tx) => createResponse(tx, { conversationId: c.id, userId: ctx.users[0]!.user.id, kind: 'chat', model: 'm', input: { message: 'x' } }));
    const event = (seq: number) => ({ seq, data: JSON.stringify({ type: 'text.delta', delta: `${seq}` }) });
    await ctx.store.write((tx) => appendEvents(tx, id, [event(3), event(4)], Date.now()));
    await ctx.store.write((tx) => appendEvents(tx, id, [event(1), event(2)], Date.now()));
    expect((await ctx.store.read((tx) => findResponseById(tx, id)))!.lastSeq).toBe(4);
  });
});
