import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { waitForListening } from '../scripts/lib/wait-for-listening';
import { describeSqliteOnly } from './helpers';

// The SQLite file of a data directory (backups, restore, its mode, a file that is not Parley's):
// SQLite-only. These tests spawn the compiled binary many times; shared machines can be slow, and no test here
// asserts on time.
setDefaultTimeout(120_000);

const tmp = (name: string) => mkdtempSync(join(tmpdir(), `parley-storage-${name}-`));
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
const byName = (checks: any[], name: string) => checks.find((c) => c.name === name);

async function run(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn([await buildBinaryOnce(), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

/**
 * Start `parley serve` on `dataDir`: the running server, or how it ended when it refused to
 * start (a server that starts when it should not is stopped again, not left running).
 */
async function serve(dataDir: string) {
  const proc = Bun.spawn([await buildBinaryOnce(), 'serve', '--port', '0', '--data-dir', dataDir], { env: { PATH: process.env.PATH ?? '' }, stdout: 'pipe', stderr: 'pipe' });
  const url = await waitForListening(proc).catch(() => undefined);
  const stop = async () => {
    proc.kill('SIGTERM');
    return proc.exited;
  };
  if (url) return { url, stop, refused: undefined };
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  return { url, stop, refused: { code, err } };
}

/** A migrated data dir plus `rows` filler rows (with an index, so that copying it takes a while). */
async function dataDirWithRows(name: string, rows: number) {
  const dir = tmp(name);
  const data = join(dir, 'data');
  expect((await run(['migrate', '--data-dir', data])).code).toBe(0);
  const db = new Database(join(data, 'parley.db'));
  db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  // One statement, one transaction: tens of MB in a couple of seconds.
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows}) INSERT INTO filler (body) SELECT hex(randomblob(64)) FROM n`);
  db.exec('CREATE INDEX filler_body ON filler (body)');
  db.close();
  return { dir, data };
}

describeSqliteOnly('the compiled binary: backups', () => {
  test('a backup killed mid-copy leaves nothing under the final name; the next one cleans up and is complete', async () => {
    const rows = 200_000;
    const { dir, data } = await dataDirWithRows('killed-backup', rows);
    const backups = join(dir, 'backups');
    mkdirSync(backups);
    const target = join(backups, 'nightly.db');

    const proc = Bun.spawn([await buildBinaryOnce(), 'backup', target, '--data-dir', data], { stdout: 'ignore', stderr: 'ignore' });
    // Kill it once the copy has started writing (whatever name it writes to).
    const writing = () =>
      readdirSync(backups).some((f) => {
        try {
          return statSync(join(backups, f)).size > 0;
        } catch {
          return false; // renamed or removed between the listing and the stat
        }
      });
    while (proc.exitCode === null && !writing()) await Bun.sleep(2);
    proc.kill('SIGKILL');
    await proc.exited;
    expect(proc.signalCode).toBe('SIGKILL'); // killed mid-copy, not after finishing
    expect(existsSync(target)).toBe(false);

    // The next run removes the killed run's leftover and writes a complete, verified copy.
    const again = await run(['backup', target, '--data-dir', data]);
    expect(again).toMatchObject({ code: 0, err: '' });
    expect(readdirSync(backups)).toEqual(['nightly.db']);
    const copy = new Database(target, { readonly: true });
    expect(copy.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    expect(copy.query('SELECT count(*) AS n FROM filler').get()).toEqual({ n: rows });
    copy.close();
  });
});

describeSqliteOnly('the compiled binary: a database file that is not Parley\'s', () => {
  /**
   * Each case is a data dir whose parley.db would have `serve` start on an empty database; the
   * fix names a restore, or (another application's file) the data directory setting.
   */
  const cases: Record<string, (data: string) => void | Promise<void>> = {
    'a 0-byte parley.db (an interrupted copy)': (data) => writeFileSync(join(data, 'parley.db'), ''),
    'a table-less SQLite file (a backup killed before its schema was written)': (data) => {
      const db = new Database(join(data, 'parley.db'), { create: true });
      db.exec('PRAGMA user_version = 7'); // writes the header page, no table
      db.close();
    },
    'another application\'s database': (data) => {
      const db = new Database(join(data, 'parley.db'), { create: true });
      db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)');
      db.close();
    },
    'a migration record whose tables are missing': async (data) => {
      expect((await run(['migrate', '--data-dir', data])).code).toBe(0);
      const db = new Database(join(data, 'parley.db'));
      db.exec('PRAGMA foreign_keys = OFF; DROP TABLE api_keys; DROP TABLE sessions;');
      db.close();
    },
  };

  for (const [name, make] of Object.entries(cases))
    test(`${name}: doctor fails naming the fix; serve and the admin commands refuse it and leave it as it is`, async () => {
      const data = join(tmp('foreign'), 'data');
      mkdirSync(data);
      await make(data);
      const file = join(data, 'parley.db');
      const before = await Bun.file(file).bytes();

      const doctor = await run(['doctor', '--json', '--data-dir', data]);
      expect(doctor.code).toBe(1);
      const check = byName(JSON.parse(doctor.out).checks, 'database');
      expect(check).toMatchObject({ status: 'fail' });
      expect(check.detail).toStartWith(`${file}: `);
      expect(check.fix).toContain(name.startsWith('another') ? '--data-dir' : 'parley restore');

      const served = await serve(data);
      if (served.url) await served.stop();
      expect(served.refused?.code).toBe(2);
      expect(served.refused?.err).toStartWith(`parley: refusing to open ${file}: `);
      for (const args of [['user', 'list'], ['migrate']]) {
        const r = await run([...args, '--data-dir', data]);
        expect({ args, code: r.code, refused: r.err.startsWith(`parley: refusing to open ${file}: `) }).toEqual({ args, code: 2, refused: true });
      }
      expect(await Bun.file(file).bytes()).toEqual(before);
    });

  test('a parley.db-wal left without its parley.db: refused, not replayed onto a new database', async () => {
    const live = join(tmp('live'), 'parley.db');
    const db = new Database(live, { create: true });
    db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);'); // still open: the WAL stays
    const data = join(tmp('orphan-wal'), 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'parley.db-wal'), await Bun.file(`${live}-wal`).bytes());
    db.close();

    const served = await serve(data);
    if (served.url) await served.stop();
    expect(served.refused?.code).toBe(2);
    expect(served.refused?.err).toContain('parley.db-wal');
    expect(existsSync(join(data, 'parley.db'))).toBe(false);
    const doctor = await run(['doctor', '--json', '--data-dir', data]);
    expect(doctor.code).toBe(1);
    expect(byName(JSON.parse(doctor.out).checks, 'database')).toMatchObject({ status: 'fail' });
  });
});

describeSqliteOnly('the compiled binary: private files', () => {
  test('a fresh serve and a fresh user create make a 0700 data dir and a 0600 database; a backup is 0600', async () => {
    const served = join(tmp('private-serve'), 'data');
    const server = await serve(served);
    expect(server.refused).toBeUndefined();
    try {
      expect(modeOf(served)).toBe('700');
      for (const f of ['parley.db', 'parley.db-wal', 'parley.db-shm']) expect({ f, mode: modeOf(join(served, f)) }).toEqual({ f, mode: '600' });
      const backup = join(tmp('private-backup'), 'copy.db');
      expect((await run(['backup', backup, '--data-dir', served])).code).toBe(0);
      expect(modeOf(backup)).toBe('600');
    } finally {
      await server.stop();
    }

    const created = join(tmp('private-cli'), 'data');
    expect((await run(['user', 'create', '--email', 'ann@example.org', '--data-dir', created])).code).toBe(0);
    expect(modeOf(created)).toBe('700');
    expect(modeOf(join(created, 'parley.db'))).toBe('600');
  });

  test('doctor warns (exit 0) about a data dir and database others can read, naming the chmod', async () => {
    const data = join(tmp('open-modes'), 'data');
    expect((await run(['migrate', '--data-dir', data])).code).toBe(0);
    chmodSync(data, 0o755);
    chmodSync(join(data, 'parley.db'), 0o644);
    const doctor = await run(['doctor', '--json', '--data-dir', data]);
    expect(doctor.code).toBe(0);
    const check = byName(JSON.parse(doctor.out).checks, 'permissions');
    expect(check).toMatchObject({ status: 'warn' });
    expect(check.fix).toContain(`chmod 700 ${data}`);
    expect(check.fix).toContain(`chmod 600 ${join(data, 'parley.db')}`);

    // The fix as written (it names doctor's own -shm too: a read-only open of a WAL database makes
    // one, with the database's mode) makes the warning go away.
    expect(Bun.spawnSync(['sh', '-c', check.fix]).exitCode).toBe(0);
    expect(byName(JSON.parse((await run(['doctor', '--json', '--data-dir', data])).out).checks, 'permissions')).toMatchObject({ status: 'ok' });
  });
});

describeSqliteOnly('the compiled binary: restore', () => {
  test('restore checks the backup, refuses while the server runs, keeps the database it replaces and swaps the backup in', async () => {
    const dir = tmp('restore');
    const data = join(dir, 'data');
    const users = async () => JSON.parse((await run(['user', 'list', '--json', '--data-dir', data])).out).map((u: any) => u.email);
    expect((await run(['user', 'create', '--email', 'ann@example.org', '--data-dir', data])).code).toBe(0);
    const backup = join(dir, 'ann.db');
    expect((await run(['backup', backup, '--data-dir', data])).code).toBe(0);
    expect((await run(['user', 'create', '--email', 'bob@example.org', '--data-dir', data])).code).toBe(0);

    // A server has the database open: swapping the file under it would lose what it writes next.
    const server = await serve(data);
    expect(server.refused).toBeUndefined();
    const busy = await run(['restore', backup, '--data-dir', data]);
    await server.stop();
    expect(busy.code).toBe(2);
    expect(busy.err).toContain('is in use');

    // Backups that would not work: refused before anything changes.
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    const newer = join(dir, 'newer.db');
    writeFileSync(newer, await Bun.file(backup).bytes());
    const future = new Database(newer);
    future.exec("INSERT INTO _parley_migrations (tag, applied_at) VALUES ('9999_from_the_future', 1)");
    future.close();
    for (const [file, says] of [[empty, 'holds no tables'], [newer, 'newer Parley'], [join(dir, 'missing.db'), 'no such file'], [dir, 'is not a file'], ['', 'is not a file']] as const) {
      const r = await run(['restore', file, '--data-dir', data]);
      expect({ file, code: r.code, says: r.err.includes(says) }).toEqual({ file, code: 2, says: true });
    }
    expect(readdirSync(data).sort()).toEqual(['parley.db']);
    expect(await users()).toEqual(['ann@example.org', 'bob@example.org']);

    const restored = await run(['restore', backup, '--data-dir', data, '--json']);
    expect(restored).toMatchObject({ code: 0, err: '' });
    const { file, kept, pending } = JSON.parse(restored.out);
    expect({ file, pending }).toEqual({ file: join(data, 'parley.db'), pending: [] });
    expect(kept).toMatch(/\/parley-before-restore-\d{8}T\d{6}Z\.db$/);
    expect(readdirSync(data).sort()).toEqual([kept.split('/').pop(), 'parley.db']);
    expect(modeOf(file)).toBe('600');
    expect(await users()).toEqual(['ann@example.org']);
    const old = new Database(kept, { readonly: true });
    expect(old.query('SELECT email FROM users ORDER BY email').all()).toEqual([{ email: 'ann@example.org' }, { email: 'bob@example.org' }]);
    old.close();
    expect((await run(['doctor', '--data-dir', data])).code).toBe(0);
  });
});
