/**
 * Upgrading a database made before the limits of issue 30, on both stores: what was stored before
 * is counted by the new caps (widget threads' sizes), and conversations shared before stay shared
 * (their writers are accepted shares), read through the same SQL on each.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { SQL } from 'bun';
import { migrate } from '../src/db/migrate';
import { migrations } from '../src/db/migrations';
import { pgMigrations } from '../src/db/pg/migrations';
import { migratePg } from '../src/db/pg/migrate';
import { openDatabase } from '../src/db/connection';
import { runOnSqlite } from '../src/db/store';
import { canWriteConversation } from '../src/chat/conversation.store';
import { postgresAvailable, startPostgres, type TestPostgres } from './support/postgres';

setDefaultTimeout(60_000);

/** Statements that make the rows an older schema held (both dialects read them alike). */
const OLD_ROWS = [
  "INSERT INTO users (id, email, subscription_updated_at, created_at, updated_at) VALUES ('u1', 'ann@example.org', 1, 1, 1)",
  "INSERT INTO conversations (id, owner_id, created_at, updated_at) VALUES ('c1', 'u1', 1, 1)",
  "INSERT INTO widgets (id, conversation_id, response_id, widget_type, created_at, updated_at) VALUES ('w1', 'c1', 'r1', 'canvas', 1, 1)",
  "INSERT INTO widget_threads (id, widget_id, user_id, status, created_at, updated_at) VALUES ('t1', 'w1', 'u1', 'archived', 1, 1)",
  "INSERT INTO widget_threads (id, widget_id, user_id, status, created_at, updated_at) VALUES ('t2', 'w1', 'u1', 'active', 1, 1)",
  `INSERT INTO widget_thread_messages (id, thread_id, seq, data, created_at) VALUES ('m1', 't1', 0, '{"text":"héllo"}', 1)`,
  `INSERT INTO widget_thread_messages (id, thread_id, seq, data, created_at) VALUES ('m2', 't1', 1, '{"n":1}', 1)`,
  // A conversation shared before offers existed: bob is its writer.
  "INSERT INTO users (id, email, subscription_updated_at, created_at, updated_at) VALUES ('u2', 'bob@example.org', 1, 1, 1)",
  "INSERT INTO conversation_writers (conversation_id, user_id, created_at) VALUES ('c1', 'u2', 1)",
];
const WRITERS = 'SELECT conversation_id AS c, user_id AS u FROM conversation_writers';
const OFFERS = 'SELECT count(*) AS n FROM conversation_shares';

const THREADS = 'SELECT id, message_count AS "messageCount", bytes FROM widget_threads ORDER BY id';
const MESSAGES = 'SELECT id, bytes FROM widget_thread_messages ORDER BY id';
const numbers = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && k !== 'id' ? Number(v) : v])));

describe('upgrading to the limits of issue 30 (SQLite)', () => {
  test('0025 counts the messages stored before (each message its bytes, each thread their number and sum); 0026 keeps every writer', () => {
    const db = openDatabase(':memory:');
    migrate(db.$client, migrations.filter((m) => m.tag < '0025'));
    for (const s of OLD_ROWS) db.$client.run(s);
    expect(migrate(db.$client, migrations.filter((m) => m.tag < '0026'))).toEqual(['0025_widget_thread_sizes']);
    // {"text":"héllo"} is 17 bytes (é takes two), {"n":1} 7.
    expect(db.$client.query(MESSAGES).all()).toEqual([{ id: 'm1', bytes: 17 }, { id: 'm2', bytes: 7 }]);
    expect(db.$client.query(THREADS).all()).toEqual([{ id: 't1', messageCount: 2, bytes: 24 }, { id: 't2', messageCount: 0, bytes: 0 }]);
    // 0026: a share made before is an accepted one: bob stays a writer, and no offer waits.
    expect(migrate(db.$client)).toContain('0026_conversation_shares');
    expect(db.$client.query(WRITERS).all()).toEqual([{ c: 'c1', u: 'u2' }]);
    expect(runOnSqlite(db, (tx) => canWriteConversation(tx, 'c1', 'u2'))).toBe(true);
    expect(db.$client.query(OFFERS).get()).toEqual({ n: 0 });
  });
});

describe.if(postgresAvailable())('upgrading to the limits of issue 30 (PostgreSQL)', () => {
  let pg: TestPostgres;
  let sql: SQL;
  beforeAll(async () => {
    pg = await startPostgres();
    sql = new SQL(pg.url);
  }, 60_000);
  afterAll(async () => {
    await sql?.close();
    await pg?.stop();
  }, 60_000);

  test('0010 counts the messages stored before, as jsonb writes them back; 0011 keeps every writer', async () => {
    await migratePg(sql, pgMigrations.filter((m) => m.tag < '0010'));
    for (const s of OLD_ROWS) await sql.unsafe(s);
    expect(await migratePg(sql, pgMigrations.filter((m) => m.tag < '0011'))).toEqual(['0010_widget_thread_sizes']);
    // jsonb writes {"text": "héllo"} and {"n": 1}: a space after each colon.
    expect(numbers(await sql.unsafe(MESSAGES))).toEqual([{ id: 'm1', bytes: 18 }, { id: 'm2', bytes: 8 }]);
    expect(numbers(await sql.unsafe(THREADS))).toEqual([{ id: 't1', messageCount: 2, bytes: 26 }, { id: 't2', messageCount: 0, bytes: 0 }]);
    expect(await migratePg(sql)).toContain('0011_conversation_shares');
    expect([...(await sql.unsafe(WRITERS))]).toEqual([{ c: 'c1', u: 'u2' }]);
    expect(numbers(await sql.unsafe(OFFERS))).toEqual([{ n: 0 }]);
  });
});
