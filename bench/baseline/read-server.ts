/**
 * Baseline (b): the floor for a read. A raw Bun.serve + bun:sqlite server that parses a JSON
 * body, runs one indexed SELECT and answers JSON — what `chat/canWriteConversation` does minus
 * authentication and the framework. The table is seeded so that the index, not a scan, answers.
 *
 *   bun bench/baseline/read-server.ts <port> <data-dir>
 */
import { Database } from 'bun:sqlite';
import { join } from 'node:path';

const port = Number(process.argv[2] ?? 0);
const db = new Database(join(process.argv[3] ?? '.', 'baseline-read.db'), { create: true, strict: true });
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS writers (conversation_id TEXT NOT NULL, user_id TEXT NOT NULL, PRIMARY KEY (conversation_id, user_id))');
const seed = db.prepare('INSERT OR IGNORE INTO writers (conversation_id, user_id) VALUES (?, ?)');
db.transaction(() => {
  for (let i = 0; i < 10_000; i++) seed.run(`conversation-${i}`, `user-${i % 100}`);
})();
const select = db.prepare('SELECT 1 AS ok FROM writers WHERE conversation_id = ? AND user_id = ? LIMIT 1');

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  async fetch(req) {
    if (req.method === 'GET') return new Response('ok');
    const body = (await req.json()) as { conversationId: string };
    const row = select.get(body.conversationId, 'user-42');
    return Response.json({ canWrite: row != null });
  },
});
console.log(`listening on ${server.url}`);
