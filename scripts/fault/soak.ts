// Soak: event-stream connect/disconnect churn plus sends against one server for a while, then a
// report of resident memory growth and responsiveness.
//
//   bun run scripts/fault/soak.ts [--minutes 10] [--streams 20] [--binary PATH | --from-source]
//
// Churn targets groupChat/subscribeToGroup (and sends with groupChat/sendGroupMessage) when the
// build serves them, otherwise any event-stream operation with a row in
// test/support/stream-openers.ts; with none it churns JSON operations and says so. Memory is
// the server's RSS (from /proc); lag is the round trip of /api/health every 250 ms, which on
// 127.0.0.1 is the server's event-loop delay plus a little. The target: RSS growth after
// warm-up ≤ 10 %. Exit code 1 when the target is missed or a request failed with a 5xx.
import { readFileSync } from 'node:fs';
import { useRunTempDir } from '../lib/run-temp-dir';
import { apiFor, buildBinary, createUserWithKey, flag, newDataDir, servedOperations, sourceCmd, startServer, admin } from './harness';
import { streamOpeners } from '../../test/support/stream-openers';

useRunTempDir('parley-soak-run', { keepOnFailure: true });
const minutes = Number(flag('minutes', '10'));
const streamWorkers = Number(flag('streams', '20'));
const cmd = Bun.argv.includes('--from-source') ? sourceCmd() : flag('binary', '') ? [flag('binary', '')] : buildBinary();
const dataDir = newDataDir('parley-soak');
admin(cmd, dataDir, ['migrate']);
const users = Array.from({ length: 4 }, (_, i) => createUserWithKey(cmd, dataDir, `soak${i}@example.org`));
// Soak measures leaks, not limits: lift the per-user caps for the run.
const server = await startServer(cmd, dataDir, { PARLEY_RATE_LIMIT_WRITE: 'off', PARLEY_RATE_LIMIT_AI: 'off', PARLEY_MAX_STREAMS_PER_USER: '0' });
const served = await servedOperations(server.url);
const apis = users.map((k) => apiFor(server.url, k));

const rssKb = (): number => {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
};

// Which stream to churn, and what to send.
const streamPath = served.has('groupChat/subscribeToGroup')
  ? 'groupChat/subscribeToGroup'
  : Object.keys(streamOpeners).find((p) => served.has(p));
const streamInputs: unknown[] = [];
if (streamPath) for (const api of apis) streamInputs.push(await streamOpeners[streamPath]!(async (p, b) => (await api(p, b)).body));
const sendGroup = served.has('groupChat/sendGroupMessage') && streamPath === 'groupChat/subscribeToGroup';
if (!streamPath) console.log('note: this build serves no event-stream operation; churn uses JSON operations only');

const stats = { streamsOpened: 0, framesRead: 0, sends: 0, serverErrors: 0, clientErrors: 0 };
const lag: number[] = [];
const samples: { t: number; rssKb: number }[] = [];
const started = Date.now();
const endAt = started + minutes * 60_000;
const warmupMs = Math.min(60_000, (minutes * 60_000) / 5);
const running = () => Date.now() < endAt;
const rand = (a: number, b: number) => a + Math.floor(Math.random() * (b - a));

async function churnStreams(i: number) {
  const api = i % apis.length;
  while (running()) {
    const abort = new AbortController();
    try {
      const res = await fetch(`${server.url}/api/${streamPath}`, {
        method: 'POST',
        headers: { 'x-api-key': users[api]!, 'content-type': 'application/json' },
        body: JSON.stringify(streamInputs[api]),
        signal: abort.signal,
      });
      if (res.status >= 500) stats.serverErrors++;
      if (res.status !== 200) {
        await res.body?.cancel();
        stats.clientErrors++;
        await Bun.sleep(100);
        continue;
      }
      stats.streamsOpened++;
      const reader = res.body!.getReader();
      const until = Date.now() + rand(100, 3000);
      while (Date.now() < until) {
        const r = await Promise.race([reader.read(), Bun.sleep(until - Date.now()).then(() => undefined)]);
        if (!r || r.done) break;
        stats.framesRead++;
      }
    } catch {
      /* aborted by us */
    } finally {
      abort.abort(); // the disconnect under test
    }
  }
}

async function sendLoop(i: number) {
  const api = apis[i % apis.length]!;
  while (running()) {
    const res = sendGroup
      ? await api('groupChat/sendGroupMessage', { ...(streamInputs[i % apis.length] as object), message: `soak ${Date.now()}` })
      : await api(i % 2 ? 'preferences/update' : 'auth/listApiKeys', i % 2 ? { enableMemories: Math.random() < 0.5 } : {});
    stats.sends++;
    if (res.status >= 500) stats.serverErrors++;
    await Bun.sleep(rand(20, 200));
  }
}

async function probeLag() {
  while (running()) {
    const t = performance.now();
    const res = await fetch(`${server.url}/api/health`);
    await res.arrayBuffer();
    lag.push(performance.now() - t);
    await Bun.sleep(250);
  }
}

async function sampleRss() {
  while (running()) {
    samples.push({ t: Date.now() - started, rssKb: rssKb() });
    if (samples.length % 12 === 0) console.log(`${Math.round((Date.now() - started) / 1000)} s: RSS ${Math.round(rssKb() / 1024)} MiB, ${JSON.stringify(stats)}`);
    await Bun.sleep(5000);
  }
}

await Promise.all([
  ...(streamPath ? Array.from({ length: streamWorkers }, (_, i) => churnStreams(i)) : []),
  ...Array.from({ length: 4 }, (_, i) => sendLoop(i)),
  probeLag(),
  sampleRss(),
]);
samples.push({ t: Date.now() - started, rssKb: rssKb() });

const afterWarmup = samples.filter((s) => s.t >= warmupMs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const base = afterWarmup[0]?.rssKb ?? samples[0]!.rssKb;
const tail = median(afterWarmup.slice(-3).map((s) => s.rssKb));
const growth = (tail - base) / base;
const sorted = [...lag].sort((a, b) => a - b);
const pct = (p: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN) * 10) / 10;
server.proc.kill('SIGTERM');
const exitCode = await server.proc.exited;
const ok = growth <= 0.1 && stats.serverErrors === 0 && exitCode === 0;
console.log(
  JSON.stringify(
    {
      minutes,
      churned: streamPath ?? '(none: JSON operations only)',
      ...stats,
      rssMiB: { start: Math.round(samples[0]!.rssKb / 1024), afterWarmup: Math.round(base / 1024), end: Math.round(tail / 1024) },
      rssGrowthAfterWarmup: `${(growth * 100).toFixed(1)} % (target ≤ 10 %)`,
      eventLoopLagMs: { p50: pct(0.5), p99: pct(0.99), max: pct(1) },
      shutdownExitCode: exitCode,
      ok,
    },
    null,
    2,
  ),
);
process.exit(ok ? 0 : 1);
