/**
 * Figure 3, fan-out.
 * - Latency: 1,000 SSE subscribers (`groupChat/subscribeToGroup`) on one group; messages sent one
 *   at a time carry their send time; every subscriber's receive time minus it is a sample.
 *   p50/p99 over all subscribers and messages. Target p99 ≤ 50 ms.
 * - Idle: 10,000 streams held open: the server's RSS (target ≤ 300 MB) and the CPU its
 *   heartbeats cost over a quiet window.
 * Baseline (d), bench/baseline/fanout-server.ts, is a raw Bun.serve broadcasting to a Set of
 * stream controllers: the floor for both.
 */
import { startBaseline, type BaselineServer } from '../lib/baselines';
import { fmtInt, fmtMB, fmtMs, type BenchContext, type Figure } from '../lib/context';
import { callOperation, startParley, Unavailable, type Parley } from '../lib/parley';
import { cpuSeconds, rssMB } from '../lib/proc';
import type { Row } from '../lib/report';
import { nowMs } from '../lib/stats';
import { startSubscribers, type SubscriberReport } from '../lib/subscribers';

const TARGET_P99_MS = 50;
const TARGET_IDLE_MB = 300;
const HEARTBEAT_S = 5;
/** Between two messages: long enough that each publish is timed alone, not queued behind the last. */
const GAP_MS = 100; // Parley's default PARLEY_SSE_HEARTBEAT_S; the baseline beats as often.

export interface Target {
  url: string;
  /** Streams spread round-robin over these servers (instances of one cluster; bench/cluster.ts) instead of `url`. */
  urls?: string[];
  pid: number;
  keys: string[];
  groupChatId: string;
  path?: string;
  publish(message: string): Promise<void>;
}

function parleyTarget(p: Parley, groupChatId: string): Target {
  return {
    url: p.url,
    pid: p.pid,
    keys: [p.key],
    groupChatId,
    publish: async (message) => {
      const r = await p.call('groupChat/sendGroupMessage', { groupChatId, message });
      if (r.status !== 200) throw new Error(`sendGroupMessage answered ${r.status}`);
    },
  };
}

function baselineTarget(b: BaselineServer): Target {
  return {
    url: b.url.replace(/\/$/, ''),
    pid: b.pid,
    keys: ['none'],
    groupChatId: 'group-1',
    path: '/subscribeToGroup',
    publish: async (message) => {
      const r = await fetch(`${b.url}publish`, { method: 'POST', body: JSON.stringify({ message }) });
      await r.arrayBuffer();
    },
  };
}

export async function measureLatency(ctx: BenchContext, t: Target, subscribers: number, messages: number) {
  const subs = await startSubscribers(ctx.benchDir, { url: t.url, urls: t.urls, keys: t.keys, groupChatId: t.groupChatId, count: subscribers, mode: 'latency', path: t.path });
  try {
    // Let the subscribe handlers settle before timing anything.
    await Bun.sleep(500);
    await t.publish('warm-up');
    await Bun.sleep(200);
    await subs.reset();
    for (let i = 0; i < messages; i++) {
      await t.publish(`bench:${nowMs().toFixed(3)}`);
      await Bun.sleep(GAP_MS);
    }
    const expected = messages * subs.ready.open;
    let report: SubscriberReport = await subs.report();
    for (let waited = 0; report.samples < expected && waited < 5000; waited += 100) {
      await Bun.sleep(100);
      report = await subs.report();
    }
    return { ready: subs.ready, report, expected };
  } finally {
    await subs.stop();
  }
}

async function measureIdle(ctx: BenchContext, t: Target, streams: number, windowS: number) {
  const rss0 = rssMB(t.pid);
  const subs = await startSubscribers(ctx.benchDir, { url: t.url, keys: t.keys, groupChatId: t.groupChatId, count: streams, mode: 'idle', path: t.path });
  try {
    await Bun.sleep(1000);
    await subs.reset();
    const cpu0 = cpuSeconds(t.pid);
    await Bun.sleep(windowS * 1000);
    const cpuS = cpuSeconds(t.pid) - cpu0;
    const report = await subs.report();
    return { ready: subs.ready, rss0, rssMB: rssMB(t.pid), cpuS, report };
  } finally {
    await subs.stop();
  }
}

type Latency = Awaited<ReturnType<typeof measureLatency>>;
type Idle = Awaited<ReturnType<typeof measureIdle>>;

const opened = (r: { ready: { open: number; statuses: Record<string, number> } }, want: number) =>
  r.ready.open < want ? `; only ${fmtInt(r.ready.open)} of ${fmtInt(want)} streams opened ${JSON.stringify(r.ready.statuses)}` : '';

export const fanoutFigure: Figure = {
  id: 'fanout',
  title: '3 fan-out',
  async run(ctx: BenchContext): Promise<Row[]> {
    const figure = '3 fan-out';
    const subscribers = 1000;
    const messages = ctx.quick ? 20 : 60;
    const idleStreams = ctx.quick ? 2000 : 10_000;
    const windowS = ctx.quick ? 6 : 12;

    const run = async (make: () => Promise<{ target: Target; stop: () => Promise<void> }>) => {
      let s = await make();
      let latency: Latency, idle: Idle;
      try {
        ctx.log(`${subscribers} subscribers, ${messages} messages`);
        latency = await measureLatency(ctx, s.target, subscribers, messages);
      } finally {
        await s.stop();
      }
      // A fresh server for the idle streams, so its RSS is not the latency run's leftovers.
      s = await make();
      try {
        ctx.log(`${fmtInt(idleStreams)} idle streams for ${windowS} s`);
        idle = await measureIdle(ctx, s.target, idleStreams, windowS);
      } finally {
        await s.stop();
      }
      return { latency, idle };
    };

    ctx.log('baseline (d)');
    const base = await run(async () => {
      const b = await startBaseline(ctx, 'fanout-server.ts', [String(HEARTBEAT_S)]);
      return { target: baselineTarget(b), stop: b.stop };
    });
    ctx.log('parley');
    let parley: typeof base;
    try {
      parley = await run(async () => {
        const p = await startParley(ctx.bin);
        try {
          const group = await callOperation(p, 'groupChat/createGroupChat', { name: 'Fan-out benchmark' });
          return { target: parleyTarget(p, group.id), stop: p.stop };
        } catch (err) {
          await p.stop();
          throw err;
        }
      });
    } catch (err) {
      if (!(err instanceof Unavailable)) throw err;
      ctx.raw.fanout = { baseline: base };
      const [bl, bi] = [base.latency.report, base.idle];
      return [
        { figure, measure: `baseline (d) alone: publish-to-receive p99, ${fmtInt(subscribers)} subscribers`, baseline: `p99 ${fmtMs(bl.p99Ms)}`, detail: `p50 ${fmtMs(bl.p50Ms)}` },
        { figure, measure: `baseline (d) alone: ${fmtInt(idleStreams)} idle streams`, baseline: `${fmtMB(bi.rssMB)} RSS`, detail: `${((bi.cpuS / windowS) * 100).toFixed(1)} % CPU` },
        { figure, measure: 'subscribeToGroup fan-out and idle streams', skipped: err.message },
      ];
    }
    ctx.raw.fanout = { baseline: base, parley };

    const pl = parley.latency;
    const bl = base.latency;
    const pi = parley.idle;
    const bi = base.idle;
    const delivered = (l: Latency) => `${fmtInt(l.report.samples)}/${fmtInt(l.expected)} delivered`;
    const perBeat = (i: Idle) => (i.report.heartbeats ? `${((i.cpuS / i.report.heartbeats) * 1e6).toFixed(1)} µs CPU per heartbeat` : 'no heartbeats seen');
    return [
      {
        figure,
        measure: `publish-to-receive p99, ${fmtInt(subscribers)} subscribers`,
        parley: fmtMs(pl.report.p99Ms),
        baseline: fmtMs(bl.report.p99Ms),
        ratio: (pl.report.p99Ms ?? NaN) / (bl.report.p99Ms ?? NaN),
        target: `≤ ${TARGET_P99_MS} ms`,
        met: pl.report.p99Ms != null && pl.report.p99Ms <= TARGET_P99_MS && pl.report.samples >= pl.expected,
        detail: `p50 ${fmtMs(pl.report.p50Ms)} (baseline ${fmtMs(bl.report.p50Ms)}), max ${fmtMs(pl.report.maxMs)}; ${messages} messages, ${delivered(pl)}${opened(pl, subscribers)}`,
      },
      {
        figure,
        measure: `RSS with ${fmtInt(idleStreams)} idle streams`,
        parley: fmtMB(pi.rssMB),
        baseline: fmtMB(bi.rssMB),
        ratio: pi.rssMB / bi.rssMB,
        target: `≤ ${TARGET_IDLE_MB} MB`,
        met: pi.rssMB <= TARGET_IDLE_MB && pi.ready.open >= idleStreams,
        detail: `${(((pi.rssMB - pi.rss0) * 1024) / Math.max(1, pi.ready.open)).toFixed(1)} KB per stream (baseline ${(((bi.rssMB - bi.rss0) * 1024) / Math.max(1, bi.ready.open)).toFixed(1)}); opened in ${(pi.ready.ms / 1000).toFixed(1)} s${opened(pi, idleStreams)}`,
      },
      {
        figure,
        measure: `heartbeat cost, ${fmtInt(idleStreams)} idle streams`,
        parley: `${((pi.cpuS / windowS) * 100).toFixed(1)} % CPU`,
        baseline: `${((bi.cpuS / windowS) * 100).toFixed(1)} % CPU`,
        ratio: bi.cpuS > 0 ? pi.cpuS / bi.cpuS : undefined,
        target: 'reported',
        detail: `${perBeat(pi)} (baseline ${perBeat(bi)}); ${fmtInt(pi.report.heartbeats)} heartbeats in ${windowS} s`,
      },
    ];
  },
};
