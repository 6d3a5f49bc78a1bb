import { describe, expect, test } from 'bun:test';
import { writeOnSqlite, runOnSqlite } from '../src/db/store';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import { openDataDir, openDatabase } from '../src/db/connection';
import { migrate, pendingMigrations } from '../src/db/migrate';
import { migrations } from '../src/db/migrations';
import { backupDatabase } from '../src/db/backup';
import { tablesAfter, UnusableDatabaseError } from '../src/db/inspect-database';
import { partialName, removeStalePartials } from '../src/db/partial-file';
import { createUser } from '../src/account/account.store';
import { appendItem, createConversation, listItems } from '../src/chat/conversation.store';
import { createResponse } from '../src/chat/response.store';
import { describeSqliteOnly } from './helpers';

/**
 * A conversation as an earlier schema holds it (the store's insert names today's columns).
 * Raw SQL, for the tests that migrate from an older version.
 */
let oldIds = 0;
function oldConversation(db: ReturnType<typeof openDatabase>, ownerId: string): string {
  const id = `old-conversation-${++oldIds}`;
  db.$client.run('INSERT INTO conversations (id, owner_id, created_at, updated_at) VALUES (?, ?, 1, 1)', [id, ownerId]);
  return id;
}

/** A user as an earlier schema holds it (the store's insert names today's columns, e.g. is_admin from 0015). */
function oldUser(db: ReturnType<typeof openDatabase>): { id: string } {
  const id = `old-user-${++oldIds}`;
  db.$client.run("INSERT INTO users (id, email, subscription_updated_at, created_at, updated_at) VALUES (?, ?, 1, 1, 1)", [id, `${id}@example.org`]);
  return { id };
}

// SQLite's own migrations, pragmas, backups and files (PostgreSQL's schema: test/pg-schema.test.ts).
describeSqliteOnly('database', () => {
  test('every SQL file of migrations/ is embedded, in order', () => {
    const files = readdirSync(new URL('../migrations', import.meta.url))
      .filter((f) => f.endsWith('.sql'))
      .sort()
      .map((f) => f.replace(/\.sql$/, ''));
    expect(migrations.map((m) => m.tag)).toEqual(files);
  });

  test('migrate applies once, records what ran, and the pragmas are set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-db-'));
    const db = openDataDir(dir);
    expect(pendingMigrations(db.$client)).toEqual(migrations.map((m) => m.tag));
    expect(migrate(db.$client)).toEqual(migrations.map((m) => m.tag));
    expect(migrate(db.$client)).toEqual([]);
    expect(pendingMigrations(db.$client)).toEqual([]);
    const get = (p: string) => Object.values(db.$client.query(`PRAGMA ${p}`).get() as object)[0];
    expect(get('journal_mode')).toBe('wal');
    expect(get('synchronous')).toBe(1); // NORMAL
    expect(get('foreign_keys')).toBe(1);
    expect(get('busy_timeout')).toBe(5000);
    db.$client.close();
  });

  test('two processes migrating at once: the one that finds a migration applied under its lock skips it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-db-race-'));
    const first = openDataDir(dir);
    let raced = false;
    // Right after the first read its list of pending migrations, another connection (a server
    // starting while an admin runs `parley migrate`) applies them all.
    const applied = migrate(first.$client, migrations, () => {
      if (raced) return;
      raced = true;
      const other = openDataDir(dir);
      expect(migrate(other.$client)).toEqual(migrations.map((m) => m.tag));
      other.$client.close();
    });
    expect(applied).toEqual([]);
    expect(pendingMigrations(first.$client)).toEqual([]);
    first.$client.close();
  });

  test('a failing migration leaves nothing half-applied', () => {
    const db = openDatabase(':memory:');
    const bad = [{ tag: '0000_bad', sql: 'CREATE TABLE a (x INTEGER);--> statement-breakpoint\nNOT SQL' }];
    expect(() => migrate(db.$client, bad)).toThrow();
    expect(db.$client.query("SELECT name FROM sqlite_master WHERE name='a'").get()).toBeNull();
    expect(pendingMigrations(db.$client, bad)).toEqual(['0000_bad']);
  });

  test('0010 drops the tool outputs earlier versions kept for finished responses, not those of running ones', () => {
    const db = openDatabase(':memory:');
    migrate(db.$client, migrations.filter((m) => m.tag < '0010'));
    const user = oldUser(db);
    const c = { id: oldConversation(db, user.id) };
    const [done, running] = [0, 1].map(() => runOnSqlite(db, (tx) => createResponse(tx, { conversationId: c.id, userId: user.id, kind: 'chat', model: 'm', input: { message: 'x' } })).id);
    db.$client.run("UPDATE responses SET status = 'completed', finished_at = 1 WHERE id = ?", [done!]);
    for (const id of [done!, running!]) db.$client.run("INSERT INTO response_tool_outputs VALUES (?, 'resp_1', 'call_1', 'out')", [id]);
    expect(migrate(db.$client)[0]).toBe('0010_finished_tool_outputs');
    expect(db.$client.query('SELECT response_id AS id FROM response_tool_outputs').all()).toEqual([{ id: running }]);
  });

  test("0011 takes a group chat's existing messages out of the history index, and the index stays consistent after", () => {
    const db = openDatabase(':memory:');
    migrate(db.$client, migrations.filter((m) => m.tag < '0011'));
    const user = oldUser(db);
    const own = { id: oldConversation(db, user.id) };
    const group = { conversationId: oldConversation(db, user.id) };
    db.$client.run("INSERT INTO group_chats (id, name, creator_id, conversation_id, created_at, updated_at) VALUES ('g1', 'G', ?, ?, 1, 1)", [user.id, group.conversationId]);
    const add = (conversationId: string, position: number, content: string) =>
      db.$client.run("INSERT INTO conversation_items (id, conversation_id, position, role, content, created_at) VALUES (?, ?, ?, 'user', ?, 1)", [
        `${conversationId}-${position}`, conversationId, position, content,
      ]);
    add(own.id, 0, 'kayak rental');
    add(group.conversationId, 0, 'kayak trip with everyone');
    add(group.conversationId, 1, 'kayak or canoe');
    const hits = () => db.$client.query("SELECT rowid FROM conversation_items_fts WHERE conversation_items_fts MATCH 'kayak'").all().length;
    expect(hits()).toBe(3);
    expect(migrate(db.$client, migrations.filter((m) => m.tag < '0012'))).toEqual(['0011_group_items_not_in_history']);
    expect(hits()).toBe(1);
    expect(db.$client.query('SELECT conversation_id AS c, searchable AS s FROM conversation_items ORDER BY c = ?, position').all(own.id)).toEqual([
      { c: group.conversationId, s: 0 }, { c: group.conversationId, s: 0 }, { c: own.id, s: 1 },
    ]);
    // Deleting the group's conversation un-indexes nothing it never indexed (a wrong 'delete' is an error here).
    db.$client.run('DELETE FROM conversations WHERE id = ?', [group.conversationId]);
    db.$client.run("INSERT INTO conversation_items_fts(conversation_items_fts, rank) VALUES ('integrity-check', 1)");
    expect(db.$client.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
  });

  test('0012 gives every conversation the position after its last item, and appending goes on from there', () => {
    const db = openDatabase(':memory:');
    migrate(db.$client, migrations.filter((m) => m.tag < '0012'));
    const user = oldUser(db);
    const [full, empty] = [oldConversation(db, user.id), oldConversation(db, user.id)];
    // Positions as a truncation leaves them: 0, 1 and 4.
    for (const position of [0, 1, 4])
      db.$client.run("INSERT INTO conversation_items (id, conversation_id, position, role, content, created_at) VALUES (?, ?, ?, 'user', 'x', 1)", [`i${position}`, full, position]);
    expect(migrate(db.$client, migrations.filter((m) => m.tag < '0013'))).toEqual(['0012_conversation_next_position']);
    expect(db.$client.query('SELECT id, next_position AS next FROM conversations ORDER BY id').all()).toEqual([
      { id: full, next: 5 },
      { id: empty, next: 0 },
    ]);
    runOnSqlite(db, (tx) => appendItem(tx, { conversationId: full, role: 'user', content: 'after' }));
    runOnSqlite(db, (tx) => appendItem(tx, { conversationId: empty, role: 'user', content: 'first' }));
    expect(runOnSqlite(db, (tx) => listItems(tx, full)).map((i) => i.position)).toEqual([0, 1, 4, 5]);
    expect(runOnSqlite(db, (tx) => listItems(tx, empty)).map((i) => i.position)).toEqual([0]);
    expect(runOnSqlite(db, (tx) => createConversation(tx, { ownerId: user.id })).nextPosition).toBe(0);
  });

  test('backup writes a consistent copy while writes go on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-backup-'));
    const db = openDataDir(dir);
    migrate(db.$client);
    for (let i = 0; i < 200; i++) writeOnSqlite(db, (tx) => createUser(tx, { email: `u${i}@example.org` }, Date.now()));
    const file = join(dir, 'copy.db');
    backupDatabase(db.$client, file);
    writeOnSqlite(db, (tx) => createUser(tx, { email: 'after@example.org' }, Date.now()));
    const copy = new Database(file, { readonly: true });
    expect((copy.query('PRAGMA integrity_check').get() as any).integrity_check).toBe('ok');
    expect((copy.query('SELECT count(*) AS n FROM users').get() as any).n).toBe(200);
    expect(() => backupDatabase(db.$client, file)).toThrow('already exists');
  });

  test('tablesAfter knows the tables the embedded migrations leave, and follows drops and renames', () => {
    const db = openDatabase(':memory:');
    migrate(db.$client);
    const actual = db.$client
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name != '_parley_migrations'")
      .all()
      .map((r) => r.name)
      .filter((t) => !/_fts_(data|idx|docsize|config|content)$/.test(t)); // FTS5's own shadow tables
    expect([...tablesAfter(migrations)].sort()).toEqual(actual.sort());
    // drizzle-kit's table rebuild
    const rebuild = [
      { tag: 'a', sql: 'CREATE TABLE `x` (`a` text);--> statement-breakpoint\nCREATE TABLE IF NOT EXISTS "y" (b);' },
      { tag: 'b', sql: 'CREATE TABLE `__new_x` (`a` text NOT NULL);--> statement-breakpoint\nDROP TABLE `x`;--> statement-breakpoint\nALTER TABLE `__new_x` RENAME TO `x`;\nDROP TABLE IF EXISTS y;' },
    ];
    expect([...tablesAfter(rebuild)]).toEqual(['x']);
  });

  test('openDataDir: a new database is created already marked as Parley\'s; an empty parley.db is refused untouched', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'parley-open-')), 'data');
    const db = openDataDir(dir);
    expect(pendingMigrations(db.$client)).toEqual(migrations.map((m) => m.tag));
    expect(db.$client.query("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: '_parley_migrations' }]);
    db.$client.close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.partial'))).toEqual([]);

    const empty = mkdtempSync(join(tmpdir(), 'parley-open-empty-'));
    writeFileSync(join(empty, 'parley.db'), '');
    expect(() => openDataDir(empty)).toThrow(UnusableDatabaseError);
    expect(() => openDataDir(empty)).toThrow(`refusing to open ${join(empty, 'parley.db')}: it holds no tables`);
    expect(Bun.file(join(empty, 'parley.db')).size).toBe(0);
    expect(existsSync(join(empty, 'parley.db-wal'))).toBe(false);
  });

  test('removeStalePartials removes what dead processes left, not what live ones write', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-partials-'));
    const dead = Bun.spawnSync(['true']).pid; // exited: its pid is free (until reused)
    const names = [`x.db.backup-${dead}.partial`, `x.db.backup-${dead}.partial-journal`, `x.db.backup-1.partial`, 'x.db', 'x.db.partial'];
    for (const n of names) writeFileSync(join(dir, n), '');
    writeFileSync(partialName(join(dir, 'y.db'), 'backup'), ''); // this process's own
    expect(removeStalePartials(dir, 'backup').sort()).toEqual([`x.db.backup-${dead}.partial`, `x.db.backup-${dead}.partial-journal`]);
    expect(readdirSync(dir).sort()).toEqual([`x.db`, 'x.db.backup-1.partial', 'x.db.partial', `y.db.backup-${process.pid}.partial`]);
  });
});
