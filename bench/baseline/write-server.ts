/**
 * Baseline (a): the floor for a write. A raw Bun.serve + bun:sqlite server that parses a JSON
 * body, inserts one row in WAL mode and answers JSON — what `groupChat/sendGroupMessage` does
 * minus authentication, the membership check, the framework and the publish.
 * Same pragmas as Parley (WAL, synchronous = NORMAL), one prepared statement.
 *
 *   bun bench/baseline/write-server.ts <port> <data-dir>
 */
import { Database } from 'bun:sqlite';
import { join } from 'node:path';

const port = Number(process.argv[2] ?? 0);
const db = new Database(join(process.argv[3] ?? '.', 'baseline-write.db'), { create: true, strict: true });
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = NORMAL');
db.exec(`CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY, group_id TEXT NOT NULL, sender_id TEXT NOT NULL, content TEXT NOT NULL, created_at INTEGER NOT NULL)`);
db.exec('CREATE INDEX IF NOT EXISTS messages_group ON messages (group_id, created_at)');
const insert = db.prepare('INSERT INTO messages (id, group_id, sender_id, content, created_at) VALUES (?, ?, ?, ?, ?)');

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  async fetch(req) {
    if (req.method === 'GET') return new Response('ok');
    const body = (await req.json()) as { groupChatId: string; message: string };
    const row = { id: Bun.randomUUIDv7(), groupChatId: body.groupChatId, content: body.message, createdAt: Date.now() };
    insert.run(row.id, row.groupChatId, 'baseline-user', row.content, row.createdAt);
    return Response.json({ id: row.id, type: 'message', role: 'user', content: row.content, createdAt: new Date(row.createdAt).toISOString() });
  },
});
console.log(`listening on ${server.url}`);
