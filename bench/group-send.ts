// sendGroupMessage throughput against a raw Bun + bun:sqlite insert server, on the same machine.
// Run: node_modules/.bin/bun run bench/group-send.ts [seconds=5] [concurrency=32]
// Prints requests per second of each and the ratio send/raw (the target is at least 0.6).
import { Database } from 'bun:sqlite';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server';
import { testConfig } from '../src/config';
import { silentLogger } from '../src/log';
import { createUser } from '../src/account/account.store';
import { createApiKey } from '../src/auth/auth.store';

const seconds = Number(process.argv[2] ?? 5);
const concurrency = Number(process.argv[3] ?? 32);

async function load(url: string, headers: Record<string, string>, body: string): Promise<number> {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
        if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        done++;
      }
    }),
  );
  return done / seconds;
}

// Raw baseline: one insert per request, same pragmas.
const rawDir = mkdtempSync(join(tmpdir(), 'bench-raw-'));
const raw = new Database(join(rawDir, 'raw.db'));
raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
raw.exec('CREATE TABLE m (id TEXT PRIMARY KEY, content TEXT NOT NULL, created_at INTEGER NOT NULL)');
const insert = raw.prepare('INSERT INTO m (id, content, created_at) VALUES (?, ?, ?)');
const rawServer = Bun.serve({
  port: 0,
  async fetch(req) {
    const { message } = (await req.json()) as { message: string };
    const row = { id: Bun.randomUUIDv7(), content: message, createdAt: Date.now() };
    insert.run(row.id, row.content, row.createdAt);
    return Response.json(row);
  },
});

const dataDir = mkdtempSync(join(tmpdir(), 'bench-parley-'));
const parley = await startServer(testConfig({ dataDir, port: 0, logLevel: 'silent', rateLimitWrite: undefined }), silentLogger);
const user = createUser(parley.deps.db, { email: 'bench@example.org', name: 'Bench' });
const { key } = createApiKey(parley.deps.db, user.id, 'bench');
const created = await fetch(`${parley.url}/api/groupChat/createGroupChat`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': key },
  body: '{"name":"bench"}',
});
const group = (await created.json()) as { id: string };

const body = JSON.stringify({ groupChatId: group.id, message: 'hello, group' });
const rawRps = await load(`http://127.0.0.1:${rawServer.port}/`, {}, body);
const parleyRps = await load(`${parley.url}/api/groupChat/sendGroupMessage`, { 'x-api-key': key }, body);
// The cost every authenticated operation pays (credential lookup, body, envelope), for comparison.
const authRps = await load(`${parley.url}/api/preferences/get`, { 'x-api-key': key }, '{}');
const r = (n: number) => Math.round(n);
console.log(JSON.stringify({ rawRps: r(rawRps), sendRps: r(parleyRps), preferencesGetRps: r(authRps), ratio: Math.round((parleyRps / rawRps) * 100) / 100 }));
rawServer.stop(true);
await parley.stop();
