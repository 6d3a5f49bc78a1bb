/**
 * The PostgreSQL schema (issue 20's first step): made from the SQLite schema, migrated by its own
 * drizzle-kit migrations on a real PostgreSQL server, and the same tables, columns, keys and
 * indexes as SQLite's after all of its migrations. Skipped where no PostgreSQL is installed,
 * except under CI (test/support/postgres.ts).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { SQL } from 'bun';
import { Database } from 'bun:sqlite';
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/db/migrate';
import { pgMigrations, statementsOf } from '../src/db/pg/migrations';
import * as pgSchema from '../src/db/pg/schema';
import * as sqliteSchema from '../src/db/schema';

// The comparison reads every table's catalogue rows: seconds on a busy shared machine.
setDefaultTimeout(60_000);
import { getTableConfig } from 'drizzle-orm/sqlite-core';
import { postgresAvailable, startPostgres, type TestPostgres } from './support/postgres';

const root = new URL('..', import.meta.url).pathname;
const run = postgresAvailable();

describe.if(run)('the PostgreSQL schema', () => {
  let pg: TestPostgres;
  let sql: SQL;
  beforeAll(async () => {
    pg = await startPostgres();
    sql = new SQL(pg.url);
    for (const m of pgMigrations) for (const statement of statementsOf(m)) await sql.unsafe(statement);
  }, 60_000);
  afterAll(async () => {
    await sql?.close();
    await pg?.stop();
  }, 60_000);

  test('every SQL file of migrations/pg/ is embedded, in order', () => {
    const files = readdirSync(join(root, 'migrations/pg'))
      .filter((f) => f.endsWith('.sql'))
      .sort()
      .map((f) => f.replace(/\.sql$/, ''));
    expect(pgMigrations.map((m) => m.tag)).toEqual(files);
  });

  test('every SQLite table has its PostgreSQL export', () => {
    const tables = Object.entries(sqliteSchema).filter(([, t]) => {
      try {
        getTableConfig(t as never);
        return true;
      } catch {
        return false;
      }
    });
    expect(Object.keys(pgSchema).sort()).toEqual(tables.map(([k]) => k).sort());
  });

  test('the migrated PostgreSQL database has the tables, columns, nullability, keys and indexes of the migrated SQLite one', async () => {
    const lite = new Database(':memory:');
    migrate(lite);
    const liteTables = lite
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE '%_fts%' ORDER BY name")
      .all()
      .map((r) => r.name);
    const pgTables = (await sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`).map((r: { name: string }) => r.name);
    expect(pgTables).toEqual(liteTables);

    // SQLite's declared types, as PostgreSQL holds the same values (from-sqlite.ts).
    const expectedType = (table: string, column: string, declared: string) => {
      const t = Object.values(sqliteSchema).find((x) => {
        try {
          return getTableConfig(x as never).name === table;
        } catch {
          return false;
        }
      });
      const c = getTableConfig(t as never).columns.find((x) => x.name === column)!;
      if (c.columnType === 'SQLiteBoolean') return 'boolean';
      if (c.columnType === 'SQLiteTextJson') return 'jsonb';
      return declared.toLowerCase() === 'integer' ? 'bigint' : 'text';
    };
    for (const table of liteTables) {
      const liteColumns = lite
        .query<{ name: string; type: string; notnull: number; pk: number }, []>(`PRAGMA table_info("${table}")`)
        .all()
        .map((c) => ({ name: c.name, type: expectedType(table, c.name, c.type), nullable: !(c.notnull || c.pk) }))
        // Order aside: SQLite appends a column a migration adds, PostgreSQL's first migration has it in place.
        .sort((a, b) => a.name.localeCompare(b.name));
      const pgColumns = (
        await sql`SELECT column_name AS name, data_type AS type, is_nullable AS nullable FROM information_schema.columns
                  WHERE table_schema = 'public' AND table_name = ${table} AND column_name <> 'search' ORDER BY ordinal_position`
      )
        .map((c: { name: string; type: string; nullable: string }) => ({ name: c.name, type: c.type, nullable: c.nullable === 'YES' }))
        .sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name));
      expect({ table, columns: pgColumns }).toEqual({ table, columns: liteColumns });

      const litePk = lite
        .query<{ name: string; pk: number }, []>(`PRAGMA table_info("${table}")`)
        .all()
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      const pgPk = (
        await sql`SELECT kcu.column_name AS name FROM information_schema.table_constraints tc
                  JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name
                  WHERE tc.table_name = ${table} AND tc.constraint_type = 'PRIMARY KEY' ORDER BY kcu.ordinal_position`
      ).map((r: { name: string }) => r.name);
      expect({ table, primaryKey: pgPk }).toEqual({ table, primaryKey: litePk });

      const liteKeys = lite.query<{ table: string; from: string; to: string; on_delete: string }, []>(`PRAGMA foreign_key_list("${table}")`).all();
      const pgKeys = await sql`
        SELECT ccu.table_name AS "table", kcu.column_name AS "from", ccu.column_name AS "to", rc.delete_rule AS on_delete
        FROM information_schema.referential_constraints rc
        JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = rc.constraint_name
        JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = rc.constraint_name
        JOIN information_schema.table_constraints tc ON tc.constraint_name = rc.constraint_name
        WHERE tc.table_name = ${table}`;
      const key = (k: { table: string; from: string; to: string; on_delete: string }) => `${k.from}->${k.table}.${k.to} ${k.on_delete.toUpperCase()}`;
      expect({ table, keys: pgKeys.map(key).sort() }).toEqual({ table, keys: liteKeys.map(key).sort() });

      const liteIndexes = lite
        .query<{ name: string }, []>(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '${table}' AND sql IS NOT NULL ORDER BY name`)
        .all()
        .map((r) => r.name);
      const pgIndexes = (await sql`SELECT indexname AS name FROM pg_indexes WHERE tablename = ${table} AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_pk' AND indexname NOT IN ('conversation_items_search_idx', 'file_chunks_search_idx') ORDER BY indexname`).map(
        (r: { name: string }) => r.name,
      );
      expect({ table, indexes: pgIndexes }).toEqual({ table, indexes: liteIndexes });
    }
    lite.close();
  });

  test('history search: searchable items only, kept in step with updates and deletes', async () => {
    const now = Date.now();
    await sql`INSERT INTO users (id, email, subscription_updated_at, created_at, updated_at) VALUES ('u1', 'ann@example.org', ${now}, ${now}, ${now})`;
    await sql`INSERT INTO conversations (id, owner_id, created_at, updated_at) VALUES ('c1', 'u1', ${now}, ${now})`;
    await sql`INSERT INTO conversation_items (id, conversation_id, position, role, content, created_at) VALUES ('i1', 'c1', 0, 'user', 'The octopus has three hearts', ${now})`;
    await sql`INSERT INTO conversation_items (id, conversation_id, position, role, content, created_at, searchable) VALUES ('i2', 'c1', 1, 'user', 'A group octopus message', ${now}, false)`;
    const found = async (word: string) =>
      (await sql`SELECT id FROM conversation_items WHERE search @@ plainto_tsquery('simple', ${word}) ORDER BY id`).map((r: { id: string }) => r.id);
    expect(await found('octopus')).toEqual(['i1']);
    expect(await found('HEARTS')).toEqual(['i1']);
    await sql`UPDATE conversation_items SET content = 'The squid has three hearts' WHERE id = 'i1'`;
    expect(await found('octopus')).toEqual([]);
    expect(await found('squid')).toEqual(['i1']);
    await sql`DELETE FROM conversations WHERE id = 'c1'`;
    expect(await found('squid')).toEqual([]);
    // A bigint holds milliseconds since the epoch (an int4 would overflow 25 days after 1970).
    const [{ t }] = await sql`SELECT subscription_updated_at AS t FROM users WHERE id = 'u1'`;
    expect(Number(t)).toBe(now);
  });

  test('the migrations are what drizzle-kit makes of the schema today: nothing left to generate', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'parley-pg-migrations-')), 'pg');
    cpSync(join(root, 'migrations/pg'), out, { recursive: true });
    const r = Bun.spawnSync([join(root, 'node_modules/.bin/drizzle-kit'), 'generate', '--dialect', 'postgresql', '--schema', './src/db/pg/schema.ts', '--out', out], {
      cwd: root,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    expect(r.exitCode).toBe(0);
    expect(readdirSync(out).filter((f) => f.endsWith('.sql'))).toEqual(readdirSync(join(root, 'migrations/pg')).filter((f) => f.endsWith('.sql')));
  }, 60_000);
});
