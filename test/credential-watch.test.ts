import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { bearer, createTestContext, sqliteOnly, type TestContext, type TestUser } from './helpers';
import { groupWith, send, subscribe } from './group-helpers';
import { SseReader } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import { openDatabase } from '../src/db/connection';
import { sqliteStore } from '../src/db/store';
import { createCredentialWatch } from '../src/auth/credential-watch';
import { forgetAllCredentials } from '../src/auth/credential-cache';
import { hashSecret } from '../src/auth/tokens';
import { silentLogger } from '../src/log';

/**
 * An open event stream ends once the credential that opened it is no longer valid
 * (src/auth/credential-watch.ts): a revoked key or session, at once when revoked through the API,
 * within a check interval when revoked by another process (the admin CLI).
 */

const openai = startFakeOpenAI();
const dirs: string[] = [];
afterAll(() => {
  openai.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const people = [
  { email: 'ann@example.org', name: 'Ann' },
  { email: 'bob@example.org', name: 'Bob' },
];

/** Read until the stream ends; the frames' data, or a timeout error. */
async function untilEnd(stream: { nextData(ms?: number): Promise<{ data: any }> }, ms = 2000) {
  const seen: unknown[] = [];
  try {
    for (;;) seen.push((await stream.nextData(ms)).data);
  } catch (err) {
    return { seen, why: String(err) };
  }
}

describe('open streams and revoked credentials', () => {
  test('a group stream opened with an API key ends when the key is revoked, and hears nothing after', async () => {
    const ctx = await createTestContext({ users: people });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const g = await groupWith(ctx, ann, [bob]);
    const keyStream = await subscribe(ctx, bob, g.id); // x-api-key
    const annStream = await subscribe(ctx, ann, g.id);
    expect(ctx.deps.credentialWatch.size).toBe(2);
    await send(ctx, ann, g.id, 'before');
    expect((await keyStream.nextData()).data.message.content).toBe('before');

    expect((await ctx.json('auth/revokeApiKey', { keyId: bob.keyId }, bearer(bob))).status).toBe(200);
    await send(ctx, ann, g.id, 'after revocation');
    const end = await untilEnd(keyStream);
    expect(end).toEqual({ seen: [], why: 'Error: stream ended' });
    // Everyone else's stream goes on.
    expect((await annStream.nextData()).data.message.content).toBe('before');
    expect((await annStream.nextData()).data.message.content).toBe('after revocation');
    expect(ctx.deps.credentialWatch.size).toBe(1);
    await annStream.close();
    for (let i = 0; i < 50 && ctx.deps.credentialWatch.size; i++) await Bun.sleep(10);
    expect(ctx.deps.credentialWatch.size).toBe(0);
  });

  test('a chat stream followed with a session ends when the session is revoked; the response runs on', async () => {
    const ctx = await createTestContext({ users: people, config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small' } });
    const ann = ctx.users[0]!;
    openai.chatScript = () => ({ pauseMs: 1500, deltas: [{ content: 'late' }] });
    const res = await ctx.call('chat/stream', { message: 'hi' }, bearer(ann));
    const reader = new SseReader(res);
    const created = await reader.next();
    expect(created?.data.type).toBe('conversation.created');
    const responseId = (await reader.next())!.data.responseId as string;

    expect((await ctx.json('auth/revokeSession', { sessionId: ann.sessionId }, ann)).status).toBe(200);
    const rest = await Promise.race([reader.all(), Bun.sleep(1000).then(() => 'still open' as const)]);
    expect(rest).toEqual([]);
    expect(reader.done).toBe(true);
    // Only the stream ended: the answer is still written, and a valid credential can read it.
    const resumed = await ctx.call('chat/resumeStream', { responseId }, ann);
    const frames = await new SseReader(resumed).all();
    expect(frames.at(-1)?.data.type).toBe('done');
    expect(frames.some((f) => f.data.type === 'text.delta' && f.data.delta === 'late')).toBe(true);
    await ctx.deps.tasks.shutdown();
  }, 10_000);

  // Another process's write is noticed through SQLite's `data_version` (on PostgreSQL the cluster
  // bus tells of it: the forgetAllCredentials test below).
  sqliteOnly('a key revoked by another process (the admin CLI) ends its streams at the next check', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-watch-'));
    dirs.push(dir);
    const file = join(dir, 'parley.db');
    const db = openDatabase(file);
    const store = sqliteStore(db);
    const ctx: TestContext = await createTestContext({
      users: people,
      db,
      deps: { store, credentialWatch: createCredentialWatch(store, { intervalMs: 100, now: Date.now, log: silentLogger }) },
    });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const g = await groupWith(ctx, ann, [bob]);
    const stream = await subscribe(ctx, bob, g.id);
    // Another connection, as `parley apikey revoke` opens: this process is not told.
    const other = new Database(file);
    other.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [Date.now(), bob.keyId]);
    other.close();
    const end = await untilEnd(stream, 1500);
    expect(end).toEqual({ seen: [], why: 'Error: stream ended' });
    expect(ctx.deps.credentialWatch.size).toBe(0);
  });

  test('a credential that stays valid keeps its stream through many checks; one never valid ends at the first', async () => {
    const ctx = await createTestContext({ users: people, deps: (store) => ({ credentialWatch: createCredentialWatch(store, { intervalMs: 20, now: Date.now, log: silentLogger }) }) });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const g = await groupWith(ctx, ann, [bob]);
    const stream = await subscribe(ctx, bob, g.id);
    const ended: string[] = [];
    const madeUp = { revoke: () => void ended.push('made up') };
    ctx.deps.credentialWatch.watch('k-no-such-key', ann.user.id, madeUp);
    await Bun.sleep(300); // some fifteen checks
    expect(ended).toEqual(['made up']);
    await send(ctx, ann, g.id, 'still here');
    expect((await stream.nextData()).data.message.content).toBe('still here');
    ctx.deps.credentialWatch.unwatch('k-no-such-key', madeUp);
    await stream.close();
  });

  test('a change the cluster bus tells of (forgetAllCredentials) is checked at once, not at the next interval', async () => {
    const ctx = await createTestContext({ users: people, deps: (store) => ({ credentialWatch: createCredentialWatch(store, { intervalMs: 60_000, now: Date.now, log: silentLogger }) }) });
    const [ann, bob] = ctx.users as [TestUser, TestUser];
    const ended: string[] = [];
    const annStream = { revoke: () => void ended.push('ann') };
    ctx.deps.credentialWatch.watch(`k${hashSecret(ann.key)}`, ann.user.id, annStream);
    ctx.deps.credentialWatch.watch(`k${hashSecret(bob.key)}`, bob.user.id, { revoke: () => void ended.push('bob') });
    expect((await ctx.call('preferences/get', {}, bob)).status).toBe(200);
    // Revoked where this process cannot see it (on PostgreSQL: by another instance; here through
    // the same connection, which `PRAGMA data_version` does not count): the cache answers as before.
    await ctx.query(sql`UPDATE api_keys SET revoked_at = ${Date.now()} WHERE id = ${bob.keyId}`);
    expect((await ctx.call('preferences/get', {}, bob)).status).toBe(200);
    await Bun.sleep(50);
    expect(ended).toEqual([]);
    forgetAllCredentials(ctx.store);
    for (let i = 0; i < 50 && !ended.length; i++) await Bun.sleep(10);
    expect(ended).toEqual(['bob']);
    expect((await ctx.call('preferences/get', {}, bob)).status).toBe(401);
    expect(ctx.deps.credentialWatch.size).toBe(1);
    ctx.deps.credentialWatch.unwatch(`k${hashSecret(ann.key)}`, annStream);
  });

  test('a stream whose client left before it was built does not stay watched', async () => {
    const ctx = await createTestContext({ users: people, config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small' } });
    const ann = ctx.users[0]!;
    openai.chatScript = () => ({ deltas: [{ content: 'hi' }] });
    const done = await new SseReader(await ctx.call('chat/stream', { message: 'hi' }, ann)).all();
    const responseId = done[1]!.data.responseId as string;
    const gone = new AbortController();
    gone.abort();
    const res = await ctx.app.handle(
      new Request('http://localhost/api/chat/resumeStream', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ann.key },
        body: JSON.stringify({ responseId }),
        signal: gone.signal,
      }),
    );
    await res.body?.cancel().catch(() => undefined);
    expect(ctx.deps.credentialWatch.size).toBe(0);
    await ctx.deps.tasks.shutdown();
  });
});
