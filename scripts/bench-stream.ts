// Relay throughput of chat/streamDeepResearch: `bun run scripts/bench-stream.ts [deltas]`.
// A local fake OpenAI Responses server streams N text deltas; Parley persists and relays them over
// a real socket to a client that parses the frames. Prints events/s (persisted and received).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOpenAI, textEvents } from '../test/fakes/openai';
import { createTestContext } from '../test/helpers';
import { openDatabase } from '../src/db/connection';

const n = Number(process.argv[2] ?? 20_000);
const fake = startFakeOpenAI();
fake.responsesScript = () => textEvents('x'.repeat(n), n);
// The reader takes upstream events as fast as they come, 64 to a network chunk.
const dir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
const ctx = await createTestContext({
  users: [{ email: 'bench@example.org' }],
  config: { aiProvider: 'openai-responses', aiBaseUrl: fake.url, aiApiKey: 'k' },
  db: openDatabase(join(dir, 'parley.db')),
});
const server = Bun.serve({ port: 0, idleTimeout: 60, fetch: (r) => ctx.app.handle(r) });
const t0 = performance.now();
const res = await fetch(`http://127.0.0.1:${server.port}/api/chat/streamDeepResearch`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': ctx.users[0]!.key },
  body: JSON.stringify({ message: 'bench' }),
});
let frames = 0;
let first = 0;
let last = 0;
let buf = '';
const dec = new TextDecoder();
for await (const chunk of res.body!) {
  buf += dec.decode(chunk, { stream: true });
  let at;
  while ((at = buf.indexOf('\n\n')) >= 0) {
    const block = buf.slice(0, at);
    buf = buf.slice(at + 2);
    if (block.includes('\ndata: ')) frames++;
    if (block.includes('"type":"text.delta"')) {
      last = performance.now();
      first ||= last;
    }
  }
}
const ms = performance.now() - t0;
const stored = ctx.db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM response_events').get()!.n;
console.log(JSON.stringify({ deltas: n, frames, stored, ms: Math.round(ms), eventsPerSecond: Math.round((frames / ms) * 1000), deltasPerSecond: Math.round((n / (last - first)) * 1000) }));
server.stop(true);
fake.stop();
ctx.db.$client.close();
rmSync(dir, { recursive: true, force: true });
