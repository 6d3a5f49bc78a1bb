import { describe, expect, test } from 'bun:test';
import { runOnSqlite, writeOnSqlite } from '../src/db/store';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedFakeExpo } from './fakes/expo';
import { openDataDir } from '../src/db/connection';
import { findUserByEmail } from '../src/account/account.store';
import { registerPushToken, listPushTokens } from '../src/notifications/push-token.store';
import { listLedger } from '../src/credits/credit.store';
import { createSession } from '../src/auth/auth.store';
import { DAY_MS } from '../src/time';
import { describeSqliteOnly } from './helpers';

const root = new URL('..', import.meta.url).pathname;

/** Run the CLI from source. Async: the fake push service lives in this process and must keep answering. */
async function parley(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn([process.execPath, join(root, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

// The CLI on a data directory's SQLite file, checked through a second connection to it.
describeSqliteOnly('credits and notify CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-cli-extras-'));
  const d = ['--data-dir', dir];

  test('credits grant adds to the ledger and prints the balance', async () => {
    expect((await parley(['user', 'create', '--email', 'ann@example.org', ...d])).code).toBe(0);
    const first = await parley(['credits', 'grant', '--email', 'ann@example.org', '--amount', '25', '--json', ...d]);
    expect(first.err).toBe('');
    expect(JSON.parse(first.out)).toEqual({ bonusBalance: 25 });
    const human = await parley(['credits', 'grant', '--email', 'ann@example.org', '--amount', '5', '--reason', 'support refund', ...d]);
    expect(human.out).toContain('bonus balance 30');
    const bad = await parley(['credits', 'grant', '--email', 'ann@example.org', '--amount', '2.5', ...d]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('--amount');
    for (const amount of ['0x10', '1e3', '-5']) expect((await parley(['credits', 'grant', '--email', 'ann@example.org', '--amount', amount, ...d])).code).not.toBe(0);
    expect((await parley(['credits', 'grant', '--email', 'nobody@example.org', '--amount', '1', ...d])).err).toContain('no user');
    const db = openDataDir(dir);
    const ann = runOnSqlite(db, (tx) => findUserByEmail(tx, 'ann@example.org'))!;
    expect(runOnSqlite(db, (tx) => listLedger(tx, ann.id)).map((e) => [e.amount, e.reason])).toEqual([
      [25, 'admin_grant'],
      [5, 'support refund'],
    ]);
    db.$client.close();
  }, 60_000);

  test('notify test pushes through the configured Expo URL and prints the report', async () => {
    const fake = sharedFakeExpo();
    fake.reset();
    const db = openDataDir(dir);
    const ann = runOnSqlite(db, (tx) => findUserByEmail(tx, 'ann@example.org'))!;
    // As the app registers them: with its session, which must still be live for pushes to go out.
    const sessionId = writeOnSqlite(db, (tx) => createSession(tx, ann.id, DAY_MS, {}, Date.now())).row.id;
    writeOnSqlite(db, (tx) => registerPushToken(tx, ann.id, 'ExponentPushToken[ok-cli]', 'ios', Date.now(), { sessionId }));
    writeOnSqlite(db, (tx) => registerPushToken(tx, ann.id, 'ExponentPushToken[gone-cli]', 'android', Date.now(), { sessionId }));
    db.$client.close();
    const env = { PARLEY_EXPO_BASE_URL: fake.url, PARLEY_PUSH_RECEIPT_DELAY_MS: '0' };
    const r = await parley(['notify', 'test', '--email', 'ann@example.org', '--conversation', 'conv-cli', '--status', 'completed', ...d], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ ok: true, tokenCount: 2, sent: 1, invalidTokens: 1, errors: 0, receiptIdsRequested: 1, receiptsMissing: 0 });
    expect(fake.delivered.map((m) => [m.to, (m.data as any).conversationId])).toEqual([['ExponentPushToken[ok-cli]', 'conv-cli']]);
    const after = openDataDir(dir);
    expect(runOnSqlite(after, (tx) => listPushTokens(tx, ann.id))).toEqual(['ExponentPushToken[ok-cli]']);
    after.$client.close();
    // Expo unreachable, nothing delivered: the report says so, and so does the exit status.
    fake.reset();
    const none = await parley(['notify', 'test', '--email', 'ann@example.org', '--conversation', 'c', '--status', 'completed', ...d], { ...env, PARLEY_EXPO_BASE_URL: 'http://127.0.0.1:9' });
    expect({ code: none.code, ok: JSON.parse(none.out).ok }).toEqual({ code: 1, ok: false });
    const bad = await parley(['notify', 'test', '--email', 'ann@example.org', '--conversation', 'c', '--status', 'done', ...d], env);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('--status');
  }, 60_000);
});
