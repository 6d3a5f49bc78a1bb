/**
 * SSE subscribers for the fan-out figures, in their own process so that the server under test
 * and the clients are measured apart. Opens `count` streams of `groupChat/subscribeToGroup`,
 * spread round-robin over the given API keys (and over `urls`, the instances of one cluster, when
 * given), then answers commands on stdin, one per line:
 *
 *   report   print one JSON line: streams open, frames, heartbeats, publish-to-receive latencies
 *   reset    zero the counters (start of a measuring window)
 *   exit     close every stream and exit
 *
 * Latency: a message whose content is `bench:<ms since epoch>` was sent at that time; each
 * subscriber's receive time minus it is one sample (same machine, same clock).
 *
 *   bun bench/clients/sse-subscribers.ts '{"url":"http://127.0.0.1:8787","keys":["..."],"groupChatId":"...","count":1000,"mode":"latency"}'
 */
import { SseConnection } from './sse-conn';
import { nowMs, percentile, round } from '../lib/stats';

interface Options {
  url: string;
  /** Several servers (instances of one cluster): stream i goes to urls[i % urls.length]; `url` is then unused. */
  urls?: string[];
  keys: string[];
  groupChatId: string;
  count: number;
  /** drain: count bytes only; latency: parse frames and time `bench:` messages; idle: count heartbeats. */
  mode: 'drain' | 'latency' | 'idle';
  /** Connections opened at once; more would overflow the listen backlog. */
  parallel?: number;
  /** Request path; a baseline server takes any. */
  path?: string;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as Options;
const targets = (opts.urls?.length ? opts.urls : [opts.url]).map((u) => new URL(u));
const path = opts.path ?? '/api/groupChat/subscribeToGroup';
const body = JSON.stringify({ groupChatId: opts.groupChatId });

const statuses: Record<string, number> = {};
let open = 0;
let closed = 0;
let frames = 0;
let heartbeats = 0;
let latencies: number[] = [];
/** The same samples by server, when there are several. */
let latenciesBy: number[][] = targets.map(() => []);
const conns: SseConnection[] = [];

function connect(i: number): Promise<void> {
  return new Promise((resolve) => {
    let settled = false;
    const done = () => {
      if (!settled) (settled = true), resolve();
    };
    const conn = new SseConnection(
      {
        onHead: (status) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === 200) open++;
          done();
        },
        onData: (data) => {
          frames++;
          if (opts.mode !== 'latency') return;
          const at = nowMs();
          const m = /"content":"bench:([\d.]+)"/.exec(data);
          if (!m) return;
          const ms = at - Number(m[1]);
          latencies.push(ms);
          latenciesBy[i % targets.length]!.push(ms);
        },
        onComment: () => heartbeats++,
        onClose: () => {
          if (settled) closed++;
          else statuses.failed = (statuses.failed ?? 0) + 1;
          done();
        },
      },
      opts.mode === 'drain',
    );
    conns.push(conn);
    const key = opts.keys[i % opts.keys.length]!;
    const { hostname, port } = targets[i % targets.length]!;
    conn.open(hostname, Number(port), path, { 'x-api-key': key }, body).catch(() => {
      statuses.failed = (statuses.failed ?? 0) + 1;
      done();
    });
    // A server that never sends the response head counts as a failure after 30 s.
    setTimeout(done, 30_000).unref();
  });
}

const started = performance.now();
let next = 0;
const parallel = opts.parallel ?? 200;
await Promise.all(
  Array.from({ length: Math.min(parallel, opts.count) }, async () => {
    while (next < opts.count) await connect(next++);
  }),
);
const bytes = () => conns.reduce((n, c) => n + c.bytes, 0);
console.log(JSON.stringify({ event: 'ready', open, statuses, ms: round(performance.now() - started, 0) }));

for await (const line of console) {
  const cmd = line.trim();
  if (cmd === 'reset') {
    frames = 0;
    heartbeats = 0;
    latencies = [];
    latenciesBy = targets.map(() => []);
    console.log(JSON.stringify({ event: 'reset' }));
  } else if (cmd === 'report') {
    console.log(
      JSON.stringify({
        event: 'report',
        open: open - closed,
        closed,
        frames,
        heartbeats,
        bytes: bytes(),
        samples: latencies.length,
        p50Ms: round(percentile(latencies, 50), 2),
        p99Ms: round(percentile(latencies, 99), 2),
        maxMs: round(percentile(latencies, 100), 2),
        ...(targets.length > 1
          ? { byUrl: targets.map((u, j) => ({ url: u.origin, samples: latenciesBy[j]!.length, p50Ms: round(percentile(latenciesBy[j]!, 50), 2), p99Ms: round(percentile(latenciesBy[j]!, 99), 2) })) }
          : {}),
      }),
    );
  } else if (cmd === 'exit') break;
}
for (const c of conns) c.close();
process.exit(0);
