/**
 * Moving between the two stores (`parley db copy`, issue 20) and the PostgreSQL migrations, on a
 * real PostgreSQL server: every table of the schema filled with awkward values (unicode, quotes,
 * NUL-free control characters, 64-bit integers, JSON with its keys out of order, booleans, NULLs)
 * and more rows than one page, copied up, read back, copied down into a new SQLite database, and
 * compared value by value. Skipped without PostgreSQL, except under CI (test/support/postgres.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { Database } from 'bun:sqlite';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getTableConfig } from 'drizzle-orm/sqlite-core';
import { DB_FILE, openDataDir } from '../src/db/connection';
import { copyPgToSqlite, copySqliteToPg, CopyError } from '../src/db/copy/copy-database';
import { tableConfigs, tablePlan } from '../src/db/copy/table-plan';
import { sqlitePages } from '../src/db/copy/read-pages';
import { canonical } from '../src/db/copy/row-values';
import { migratePg, pgMigrationState } from '../src/db/pg/migrate';
import { migrate } from '../src/db/migrate';
import { pgMigrations } from '../src/db/pg/migrations';
import { postgresAvailable, startPostgres, type TestPostgres } from './support/postgres';

const root = new URL('..', import.meta.url).pathname;
const run = postgresAvailable();

const TEXTS = ['plain', 'Grüße, 你好, 🙂', "it's \"quoted\" \\ back", 'line\nbreak\ttab\u0001', '', ' spaced '];
const INTS = [0, 1, -5, 1_764_000_000_000, 9_007_199_254_740_993n, -9_223_372_036_854_775_808n];
const JSONS = ['{"b":1,"a":[1,2,{"z":null,"y":"é"}]}', '[]', '"just a string"', '{"nested":{"deep":{"deeper":true}}}', '3.5'];

/**
 * Fill every table of a migrated SQLite database with `perTable` rows (and `big` in one table, to
 * cross page boundaries), each foreign key pointing at a row of its parent. Returns the file.
 */
function fillDatabase(dataDir: string, perTable = 4, big = 1234): string {
  const db = openDataDir(dataDir);
  migrate(db.$client);
  db.$client.close();
  const file = join(dataDir, DB_FILE);
  const lite = new Database(file, { safeIntegers: true });
  lite.exec('PRAGMA foreign_keys = ON');
  const keys = new Map<string, Record<string, unknown>[]>();
  let n = 0;
  for (const t of tablePlan()) {
    const config = tableConfigs().find((c) => c.name === t.name)!;
    const parentOf = new Map<string, { table: string; column: string }>();
    for (const fk of config.foreignKeys) {
      const r = fk.reference();
      r.columns.forEach((c, i) => parentOf.set(c.name, { table: getTableConfig(r.foreignTable).name, column: r.foreignColumns[i]!.name }));
    }
    const count = t.name === 'response_events' ? big : perTable;
    const rows: Record<string, unknown>[] = [];
    const insert = lite.query(`INSERT OR IGNORE INTO "${t.name}" (${t.columns.map((c) => `"${c.name}"`).join(', ')}) VALUES (${t.columns.map(() => '?').join(', ')}) RETURNING *`);
    for (let i = 0; i < count; i++) {
      n++;
      const values = t.columns.map((c, ci) => {
        const parent = parentOf.get(c.name);
        if (parent) {
          const candidates = keys.get(parent.table)!;
          return candidates[(i + ci) % candidates.length]![parent.column];
        }
        const col = config.columns.find((x) => x.name === c.name)!;
        if (!col.notNull && !col.primary && (i + ci) % 5 === 4) return null;
        switch (c.kind) {
          case 'text':
            return t.key.includes(c.name) || col.isUnique ? `${c.name}-${String(n).padStart(6, '0')}-${TEXTS[i % TEXTS.length]}` : TEXTS[(i + ci) % TEXTS.length];
          case 'integer':
            return t.key.includes(c.name) || col.isUnique ? BigInt(n) : INTS[(i + ci) % INTS.length];
          case 'boolean':
            return (i + ci) % 2;
          case 'json':
            return JSONS[(i + ci) % JSONS.length];
        }
      });
      const row = insert.get(...(values as never[])) as Record<string, unknown> | null;
      if (row) rows.push(row);
    }
    keys.set(t.name, rows);
  }
  lite.close();
  return file;
}

/** Every row of every table in canonical form, in key order. */
function snapshotSqlite(file: string): Record<string, string[]> {
  const lite = new Database(file, { readonly: true, safeIntegers: true });
  const out: Record<string, string[]> = {};
  for (const t of tablePlan()) {
    out[t.name] = [];
    for (const page of sqlitePages(lite, t)) for (const row of page) out[t.name]!.push(t.columns.map((c) => canonical(c.kind, row[c.name], 'sqlite')).join('|'));
  }
  lite.close();
  return out;
}

describe.if(run)('moving between SQLite and PostgreSQL', () => {
  let pg: TestPostgres;
  let admin: SQL;
  let dbs = 0;
  /** A new, empty database on the test server, and a client for it. */
  const newDatabase = async () => {
    const name = `copy_${++dbs}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = pg.url.replace(/\/postgres$/, `/${name}`);
    return { url, sql: new SQL({ url, max: 2 }) };
  };
  beforeAll(async () => {
    pg = await startPostgres();
    admin = new SQL(pg.url);
  }, 60_000);
  afterAll(async () => {
    await admin?.close();
    await pg?.stop();
  }, 60_000);

  test('every table up to PostgreSQL and back down: the same rows, value for value, and the copy verified on the way', async () => {
    const from = mkdtempSync(join(tmpdir(), 'parley-copy-'));
    const file = fillDatabase(from);
    const edit = new Database(file);
    edit.query("UPDATE conversation_items SET searchable = 1, content = 'The octopus has three hearts' WHERE rowid = (SELECT min(rowid) FROM conversation_items)").run();
    edit.close();
    const before = snapshotSqlite(file);
    // Every table has rows, and one spans several pages.
    for (const [table, rows] of Object.entries(before)) expect({ table, some: rows.length > 0 }).toEqual({ table, some: true });
    expect(before.response_events!.length).toBeGreaterThan(1000);

    const { sql } = await newDatabase();
    const seen: string[] = [];
    const up = await copySqliteToPg(from, sql, (_d, _t, table) => void (seen.includes(table) || seen.push(table)));
    expect(up.rows).toBe(Object.values(before).reduce((a, r) => a + r.length, 0));
    expect(up.tables.map((t) => t.name)).toEqual(seen);
    // Parents before children: users first, and responses before their events.
    expect(seen.indexOf('users')).toBeLessThan(seen.indexOf('conversations'));
    expect(seen.indexOf('responses')).toBeLessThan(seen.indexOf('response_events'));

    // PostgreSQL holds them in its own types.
    const [user] = await sql`SELECT * FROM users ORDER BY id COLLATE "C" LIMIT 1`;
    expect(typeof user.created_at).toBe('string'); // bigint, as Bun's client gives it
    const [counts] = await sql`SELECT count(*)::int AS n FROM response_events`;
    expect(counts.n).toBe(before.response_events!.length);
    const types = await sql`SELECT data_type AS t FROM information_schema.columns WHERE table_name = 'conversation_items' AND column_name IN ('searchable', 'content')`;
    expect(types.map((r: { t: string }) => r.t).sort()).toEqual(['boolean', 'text']);
    const json = await sql`SELECT count(*)::int AS n FROM responses WHERE jsonb_typeof(input) IS NOT NULL`;
    expect(json[0].n).toBeGreaterThan(0);
    // History search works on what was copied (the generated tsvector column).
    const word = 'octopus';
    const found = await sql`SELECT count(*)::int AS n FROM conversation_items WHERE search @@ plainto_tsquery('simple', ${word})`;
    expect(found[0].n).toBeGreaterThan(0);

    const to = mkdtempSync(join(tmpdir(), 'parley-copy-back-'));
    const down = await copyPgToSqlite(sql, to);
    expect(down.tables).toEqual(up.tables);
    expect(snapshotSqlite(join(to, DB_FILE))).toEqual(before);
    // The new file is a Parley database the server opens, and its search index was built.
    const opened = openDataDir(to);
    const hits = opened.$client.query("SELECT count(*) AS n FROM conversation_items_fts WHERE conversation_items_fts MATCH ?").get(word) as { n: number };
    expect(hits.n).toBeGreaterThan(0);
    opened.$client.close();
    await sql.close();
  }, 120_000);

  test('a live source: rows written while the copy runs are not in it, and the copy still verifies', async () => {
    const from = mkdtempSync(join(tmpdir(), 'parley-copy-live-'));
    const file = fillDatabase(from, 3, 1500);
    const before = snapshotSqlite(file);
    const writer = new Database(file);
    writer.exec('PRAGMA busy_timeout = 5000');
    let wrote = 0;
    const { sql } = await newDatabase();
    const report = await copySqliteToPg(from, sql, (_d, _t, table) => {
      if (table !== 'response_events') return;
      // The server goes on writing: a new user, each page.
      writer.query('INSERT INTO users (id, email, subscription_updated_at, created_at, updated_at) VALUES (?, ?, 1, 1, 1)').run(`live-${wrote}`, `live-${wrote++}@example.org`);
    });
    writer.close();
    expect(wrote).toBeGreaterThan(1);
    expect(report.tables.find((t) => t.name === 'users')!.rows).toBe(before.users!.length);
    const [users] = await sql`SELECT count(*)::int AS n FROM users`;
    expect(users.n).toBe(before.users!.length);
    await sql.close();
  }, 120_000);

  test('refusals: a target with rows, a NUL character PostgreSQL cannot hold (nothing is left behind), a data directory that has a database', async () => {
    const from = mkdtempSync(join(tmpdir(), 'parley-copy-refuse-'));
    const file = fillDatabase(from, 2, 2);
    const { sql } = await newDatabase();
    await copySqliteToPg(from, sql);
    await expect(copySqliteToPg(from, sql)).rejects.toThrow(/not empty \(rows in /);

    const other = await newDatabase();
    const lite = new Database(file);
    lite.query('UPDATE conversation_items SET content = ? WHERE rowid = (SELECT min(rowid) FROM conversation_items)').run('a\u0000b');
    lite.close();
    const err = await copySqliteToPg(from, other.sql).catch((e) => e);
    expect(err).toBeInstanceOf(CopyError);
    expect(err.message).toMatch(/^conversation_items id=.*: content holds a NUL character/);
    const left = await other.sql`SELECT count(*)::int AS n FROM users`;
    expect(left[0].n).toBe(0); // one transaction: the users copied before it were rolled back

    await expect(copyPgToSqlite(sql, from)).rejects.toThrow(/already exists/);
    const empty = await newDatabase();
    await expect(copyPgToSqlite(empty.sql, mkdtempSync(join(tmpdir(), 'parley-copy-none-')))).rejects.toThrow(/no Parley database/);
    for (const c of [sql, other.sql, empty.sql]) await c.close();
  }, 120_000);

  test('a database a newer Parley migrated is refused both ways; pending migrations are applied on the way up', async () => {
    const { sql } = await newDatabase();
    await migratePg(sql, pgMigrations.slice(0, 1));
    expect((await pgMigrationState(sql)).pending).toEqual(pgMigrations.slice(1).map((m) => m.tag));
    await expect(copyPgToSqlite(sql, mkdtempSync(join(tmpdir(), 'parley-copy-pending-')))).rejects.toThrow(`needs ${pgMigrations.length - 1} migration(s) first`);
    const from = mkdtempSync(join(tmpdir(), 'parley-copy-newer-'));
    fillDatabase(from, 1, 1);
    await copySqliteToPg(from, sql); // applies the rest first
    expect((await pgMigrationState(sql)).pending).toEqual([]);
    await sql`INSERT INTO _parley_migrations (tag, applied_at) VALUES ('9999_from_the_future', 1)`;
    await expect(copyPgToSqlite(sql, mkdtempSync(join(tmpdir(), 'parley-copy-future-')))).rejects.toThrow(/newer Parley \(9999_from_the_future\)/);
    const fresh = mkdtempSync(join(tmpdir(), 'parley-copy-future-up-'));
    fillDatabase(fresh, 1, 1);
    await expect(copySqliteToPg(fresh, sql)).rejects.toThrow(/newer Parley/);
    await sql.close();
  }, 120_000);

  test('migrations: three instances migrating one database at once apply each migration once; a second run applies nothing', async () => {
    const { url, sql } = await newDatabase();
    const clients = [new SQL({ url, max: 1 }), new SQL({ url, max: 1 }), new SQL({ url, max: 1 })];
    const applied = await Promise.all(clients.map((c) => migratePg(c)));
    expect(applied.flat().sort()).toEqual(pgMigrations.map((m) => m.tag).sort());
    expect(await migratePg(sql)).toEqual([]);
    const record = await sql`SELECT tag FROM _parley_migrations ORDER BY tag`;
    expect(record.map((r: { tag: string }) => r.tag)).toEqual(pgMigrations.map((m) => m.tag));
    for (const c of [...clients, sql]) await c.close();
  }, 60_000);

  test('the CLI: db copy --to and --from with --json, migrate and doctor with PARLEY_DATABASE_URL, and the commands that refuse it', async () => {
    const cli = (args: string[], env: Record<string, string> = {}) => {
      const p = Bun.spawnSync([process.execPath, join(root, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    const from = mkdtempSync(join(tmpdir(), 'parley-copy-cli-'));
    expect(cli(['user', 'create', '--email', 'ann@example.org', '--data-dir', from]).code).toBe(0);
    const { url, sql } = await newDatabase();
    const withPassword = url.replace('parley@', 'parley:s3cret@'); // trust authentication ignores it
    const up = cli(['db', 'copy', '--to', withPassword, '--json', '--data-dir', from]);
    expect(up.err).toBe('');
    const report = JSON.parse(up.out);
    // User and password masked, by the same function as every report (src/mask-secrets.ts).
    expect(report.target).toBe(withPassword.replace('parley:s3cret@', '********:********@'));
    expect(report.tables.find((t: { name: string }) => t.name === 'users').rows).toBe(1);
    // The files' bytes stay where the storage is; none named here (test/backup-files.test.ts has some).
    expect(report.files).toEqual({ storage: 'disk', blobs: 0, bytes: 0, uploaded: 0, missing: 0, missingKeys: [], where: join(from, 'files') });
    expect(cli(['db', 'copy', '--to', url, '--data-dir', from]).err).toMatch(/^parley: the PostgreSQL database is not empty/);

    // With PARLEY_DATABASE_URL set: --from without a URL takes it; migrate and doctor use it.
    const env = { PARLEY_DATABASE_URL: url };
    const to = mkdtempSync(join(tmpdir(), 'parley-copy-cli-back-'));
    const down = cli(['db', 'copy', '--from', '--data-dir', to], env);
    expect(down.code).toBe(0);
    expect(down.out).toMatch(/^copied \d+ rows in \d+ tables from postgres:/);
    expect(existsSync(join(to, DB_FILE))).toBe(true);
    expect(JSON.parse(cli(['migrate', '--json', '--data-dir', to], env).out)).toEqual({ applied: [] });
    const doctor = JSON.parse(cli(['doctor', '--json', '--data-dir', to], env).out);
    const named = (n: string) => doctor.checks.find((c: { name: string }) => c.name === n);
    expect(named('postgres')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/PostgreSQL 1[5-9]/) });
    expect(named('postgres migrations')).toMatchObject({ status: 'ok' });
    expect(named('server database')).toBeUndefined();
    // The admin commands work on PostgreSQL: the user copied up is there.
    const listed = cli(['user', 'list', '--json', '--data-dir', to], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out).map((u: { email: string }) => u.email)).toEqual(['ann@example.org']);
    for (const [args, instead] of [
      [['backup', join(to, 'b.db')], /pg_dump/],
      [['restore', join(to, 'b.db')], /pg_restore/],
    ] as const) {
      const r = cli([...args, '--data-dir', to], env);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.err).toMatch(/^parley: PARLEY_DATABASE_URL is set, and this command works on the SQLite database in the data directory only: /);
      expect(r.err).toMatch(instead);
    }
    const unreachable = cli(['db', 'copy', '--to', 'postgres://nobody@127.0.0.1:1/none', '--data-dir', from]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.err).toMatch(/^parley: postgres:\/\/\*{8}@127\.0\.0\.1:1\/none: /); // user info masked
    expect(cli(['db', 'copy', '--data-dir', from]).err).toMatch(/say where to copy/);
    await sql.close();
  }, 120_000);
});
