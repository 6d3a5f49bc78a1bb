// Fan-out latency and idle-stream memory of the group stream, over real HTTP.
// Run: BUN_CONFIG_MAX_HTTP_REQUESTS=65000 node_modules/.bin/bun run bench/group-fanout.ts [subscribers=1000] [messages=50] [idle=0]
// Prints p50/p99 of send→receive latency across all subscribers, and the server's RSS with the
// idle streams open. Clients run in the same process (their memory counts too), so the numbers
// are pessimistic. Bun's fetch allows 256 connections per process unless told otherwise.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server';
import { testConfig } from '../src/config';
import { silentLogger } from '../src/log';
import { createUser } from '../src/account/account.store';
import { createApiKey } from '../src/auth/auth.store';

const subscribers = Number(process.argv[2] ?? 1000);
const messages = Number(process.argv[3] ?? 50);
const idle = Number(process.argv[4] ?? 0);

const dataDir = mkdtempSync(join(tmpdir(), 'bench-fanout-'));
const parley = await startServer(testConfig({ dataDir, port: 0, logLevel: 'silent', rateLimitWrite: undefined, maxStreamsPerUser: 1_000_000 }), silentLogger);
const user = createUser(parley.deps.db, { email: 'bench@example.org', name: 'Bench' });
const { key } = createApiKey(parley.deps.db, user.id, 'bench');
const post = (path: string, body: unknown) =>
  fetch(`${parley.url}/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
const group = (await (await post('groupChat/createGroupChat', { name: 'bench' })).json()) as { id: string };

const latencies: number[] = [];
let received = 0;
async function subscriber(measure: boolean) {
  const res = await post('groupChat/subscribeToGroup', { groupChatId: group.id });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  // Wrapped in an object: returning the promise itself would make `await subscriber()` wait for the stream's end.
  const loop = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (!measure) continue;
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const m = /"content":"t=(\d+(?:\.\d+)?)"/.exec(frame);
        if (m) {
          latencies.push(performance.now() - Number(m[1]));
          received++;
        }
      }
    }
  })();
  return { loop };
}

const open = async (n: number, measure: boolean) => {
  for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => subscriber(measure)));
};
await open(idle, false);
if (idle) {
  Bun.gc(true);
  await Bun.sleep(500);
  console.log(JSON.stringify({ idleStreams: idle, rssMB: Math.round(process.memoryUsage().rss / 1e6) }));
}
let t0 = performance.now();
await open(subscribers, true);
console.error(`subscribed ${subscribers} in ${Math.round(performance.now() - t0)} ms`);
for (let i = 0; i < messages; i++) {
  await post('groupChat/sendGroupMessage', { groupChatId: group.id, message: `t=${performance.now()}` });
  await Bun.sleep(20);
}
const deadline = Date.now() + 10_000;
while (received < subscribers * messages && Date.now() < deadline) await Bun.sleep(20);
latencies.sort((a, b) => a - b);
const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]! * 10) / 10;
console.log(JSON.stringify({ subscribers, messages, received, expected: subscribers * messages, p50ms: q(0.5), p99ms: q(0.99), maxMs: q(1) }));
process.exit(0);
