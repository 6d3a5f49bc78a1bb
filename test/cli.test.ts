import { describe, expect, setDefaultTimeout, test } from 'bun:test';

// These tests spawn processes; shared machines can be slow, and no test here asserts on time.
setDefaultTimeout(60_000);
import { mkdtempSync, existsSync } from 'node:fs';
import { openDataDir } from '../src/db/connection';
import { migrate, pendingMigrations } from '../src/db/migrate';
import { migrations } from '../src/db/migrations';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeSqliteOnly } from './helpers';

const root = new URL('..', import.meta.url).pathname;

/** Run the CLI from source, as the binary would run it. */
function parley(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync([process.execPath, join(root, 'cli/main.ts'), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

// The admin CLI on a data directory's SQLite file. (On PostgreSQL it runs in the SIGTERM test of
// test/shutdown.test.ts and for every server of test/support/binary-server.ts.)
describeSqliteOnly('admin CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-cli-'));
  const d = ['--data-dir', dir];

  test('output into a pipe the reader already closed (`| head -c 0`): exit 0, no stack trace', async () => {
    const own = mkdtempSync(join(tmpdir(), 'parley-cli-pipe-')); // the other tests count the users of `dir`
    expect(parley(['user', 'create', '--email', 'pipe@example.org', '--data-dir', own]).code).toBe(0);
    // A reader that closed before the CLI writes, as `| head -c 0` gives.
    const direct = Bun.spawn([process.execPath, join(root, 'cli/main.ts'), 'user', 'list', '--json', '--data-dir', own], { stdout: 'pipe', stderr: 'pipe' });
    await direct.stdout.cancel();
    const [code, err] = await Promise.all([direct.exited, new Response(direct.stderr).text()]);
    expect({ code, err }).toEqual({ code: 0, err: '' });
  });

  test('user create / list / set, with --json', () => {
    const created = parley(['user', 'create', '--email', 'Ann@Example.org', '--name', 'Ann', '--account-type', 'student', '--json', ...d]);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.out)).toMatchObject({ id: expect.any(String), email: 'ann@example.org', name: 'Ann', accountType: 'STUDENT' });

    const dup = parley(['user', 'create', '--email', 'ann@example.org', ...d]);
    expect(dup.code).not.toBe(0);
    expect(dup.err.trim().split('\n')).toHaveLength(1);
    expect(dup.err).toContain('already exists');

    const set = parley(['user', 'set', '--email', 'ann@example.org', '--tier', 'pro', '--active', '--expires', '2099-05-01T00:00:00.000Z', '--product', 'pro_y', '--locked', '--json', ...d]);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({ isLocked: true, subscription: { tier: 'PRO', isActive: true, expiresAt: '2099-05-01T00:00:00.000Z', productId: 'pro_y' } });

    const list = parley(['user', 'list', '--json', ...d]);
    expect(JSON.parse(list.out).map((u: any) => u.email)).toEqual(['ann@example.org']);
    expect(parley(['user', 'set', '--email', 'nobody@example.org', '--active', ...d]).code).not.toBe(0);
    expect(parley(['user', 'set', '--email', 'ann@example.org', '--tier', 'GOLD', ...d]).err).toContain('--tier');
    // Not ISO 8601: refused, not read leniently (as 2001-12-25) and stored.
    for (const expires of ['Dec 25', '12', '2027-13', '2027-02-30', '2027-13-01', '2027-01-01T24:00']) {
      const bad = parley(['user', 'set', '--email', 'ann@example.org', '--expires', expires, ...d]);
      expect({ expires, failed: bad.code !== 0, says: bad.err.includes('--expires') }).toEqual({ expires, failed: true, says: true });
    }
    const expiresAt = (expires: string, env: Record<string, string> = {}) =>
      JSON.parse(parley(['user', 'set', '--email', 'ann@example.org', '--expires', expires, '--json', ...d], env).out).subscription.expiresAt;
    expect(expiresAt('2028-01-02')).toBe('2028-01-02T00:00:00.000Z');
    expect(expiresAt('2028-02-29')).toBe('2028-02-29T00:00:00.000Z'); // a leap day
    // A time without a zone is UTC, whatever the machine's zone; with one, that zone.
    expect(expiresAt('2028-01-02T12:00', { TZ: 'America/New_York' })).toBe('2028-01-02T12:00:00.000Z');
    expect(expiresAt('2028-01-02T12:00+02:00')).toBe('2028-01-02T10:00:00.000Z');
  });

  test('the environment names the data dir too', () => {
    const envDir = mkdtempSync(join(tmpdir(), 'parley-cli-env-'));
    expect(parley(['user', 'create', '--email', 'env@example.org'], { PARLEY_DATA_DIR: envDir }).code).toBe(0);
    expect(existsSync(join(envDir, 'parley.db'))).toBe(true);
  });

  test('session create, apikey create / list / revoke', () => {
    const s = parley(['session', 'create', '--email', 'ann@example.org', '--json', ...d]);
    expect(JSON.parse(s.out).token).toMatch(/^ps_/);
    const k = JSON.parse(parley(['apikey', 'create', '--email', 'ann@example.org', '--name', 'ci', '--json', ...d]).out);
    // (no asymmetric matchers on `k`: toMatchObject would write them into it)
    expect(typeof k.keyId).toBe('string');
    expect(k.key).toMatch(/^pk_/);
    const listed = JSON.parse(parley(['apikey', 'list', '--email', 'ann@example.org', '--json', ...d]).out);
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed).includes(k.key)).toBe(false);
    const revoked = parley(['apikey', 'revoke', k.keyId, ...d]);
    expect(revoked.err).toBe('');
    expect(revoked.code).toBe(0);
    expect(JSON.parse(parley(['apikey', 'list', '--email', 'ann@example.org', '--json', ...d]).out)[0].revokedAt).toEqual(expect.any(String));
    const unknown = parley(['apikey', 'revoke', 'nope', ...d]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toContain('no API key');
  });

  test('migrate and backup', () => {
    expect(JSON.parse(parley(['migrate', '--json', ...d]).out)).toEqual({ applied: [] });
    const fresh = mkdtempSync(join(tmpdir(), 'parley-cli-fresh-'));
    expect(JSON.parse(parley(['migrate', '--json', '--data-dir', fresh]).out).applied.length).toBeGreaterThan(0);
    const file = join(dir, 'backup.db');
    expect(parley(['backup', file, ...d]).code).toBe(0);
    expect(existsSync(file)).toBe(true);
    expect(parley(['backup', file, ...d]).code).not.toBe(0);
  });

  test('a database that needs migrations (a new binary, the old server still running) is refused by admin commands, not migrated under it', () => {
    const older = mkdtempSync(join(tmpdir(), 'parley-cli-older-'));
    // As an older Parley left it: every migration but the last.
    const db = openDataDir(older);
    migrate(db.$client, migrations.slice(0, -1));
    db.$client.close();
    const last = migrations.at(-1)!.tag;
    for (const args of [['user', 'list'], ['user', 'create', '--email', 'x@example.org']]) {
      const r = parley([...args, '--data-dir', older]);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.err).toContain(`needs 1 migration(s) (${last})`);
      expect(r.err).toContain('parley migrate');
    }
    const check = openDataDir(older);
    expect(pendingMigrations(check.$client)).toEqual([last]);
    check.$client.close();
    expect(JSON.parse(parley(['migrate', '--json', '--data-dir', older]).out)).toEqual({ applied: [last] });
    expect(parley(['user', 'list', '--data-dir', older]).code).toBe(0);
  });
});
