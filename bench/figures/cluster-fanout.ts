/**
 * Scale-out figure 2: group fan-out across instances. 1,000 SSE subscribers
 * (`groupChat/subscribeToGroup`, one member's key) on one group of a three-instance cluster, the
 * messages sent to instance 1: every stream on instance 1, against the streams spread round-robin
 * over the three (two thirds of them then hear each message over the cluster bus). Both layouts on
 * the same running cluster, in alternating rounds, so the difference is the bus hop and the work
 * of the receiving instances; the lower p99 of each layout's rounds counts. The caller runs it once
 * with the bus over PostgreSQL LISTEN/NOTIFY and once over Redis.
 */
import { fmtInt, fmtMs, type BenchContext } from '../lib/context';
import type { InstanceSet } from '../lib/cluster';
import type { Row } from '../lib/report';
import { measureLatency, type Target } from './fanout';

const SUBSCRIBERS = 1000;

type Latency = Awaited<ReturnType<typeof measureLatency>>;

export async function clusterFanoutFigure(ctx: BenchContext, set: InstanceSet, bus: string): Promise<Row[]> {
  const figure = '2 fan-out';
  const messages = ctx.quick ? 20 : 60;
  const [one] = set.instances;
  const key = set.createUser('fanout@bench.example');
  const created = await post(one!.url, 'groupChat/createGroupChat', { name: 'Fan-out benchmark' }, key);
  const target = (urls: string[]): Target => ({
    url: one!.url,
    urls,
    pid: one!.pid,
    keys: [key],
    groupChatId: created.id,
    publish: async (message) => void (await post(one!.url, 'groupChat/sendGroupMessage', { groupChatId: created.id, message }, key)),
  });
  const layouts = {
    one: target([one!.url]),
    spread: target(set.instances.map((i) => i.url)),
  };
  const runs: Record<keyof typeof layouts, Latency[]> = { one: [], spread: [] };
  for (let round = 0; round < ctx.rounds; round++) {
    for (const name of ['one', 'spread'] as const) {
      ctx.log(`bus ${bus}, round ${round + 1}/${ctx.rounds}: ${fmtInt(SUBSCRIBERS)} subscribers ${name === 'one' ? 'on instance 1' : 'over 3 instances'}, ${messages} messages`);
      runs[name].push(await measureLatency(ctx, layouts[name], SUBSCRIBERS, messages));
      // The closed streams' slots are released in the background: let that pass before timing again.
      await Bun.sleep(1000);
    }
  }
  ctx.raw[`fanout-${bus}`] = runs;
  const pick = (rs: Latency[]) => rs.reduce((a, b) => ((b.report.p99Ms ?? Infinity) < (a.report.p99Ms ?? Infinity) ? b : a));
  const [o, s] = [pick(runs.one), pick(runs.spread)];
  const short = (l: Latency) => (l.report.samples < l.expected || l.ready.open < SUBSCRIBERS ? `; only ${fmtInt(l.report.samples)}/${fmtInt(l.expected)} delivered, ${l.ready.open} streams open ${JSON.stringify(l.ready.statuses)}` : '');
  const byInstance = (s.report.byUrl ?? []).map((u, i) => `${i + 1}: ${fmtMs(u.p99Ms)}`).join(', ');
  const rounds = (rs: Latency[]) => rs.map((r) => fmtMs(r.report.p99Ms)).join(', ');
  return [
    {
      figure,
      measure: `publish-to-receive p99, ${fmtInt(SUBSCRIBERS)} subscribers over 3 instances vs on 1, bus ${bus}`,
      parley: fmtMs(s.report.p99Ms),
      baseline: fmtMs(o.report.p99Ms),
      ratio: (s.report.p99Ms ?? NaN) / (o.report.p99Ms ?? NaN),
      target: 'reported',
      detail:
        `p50 ${fmtMs(s.report.p50Ms)} spread, ${fmtMs(o.report.p50Ms)} on one; p99 by instance ${byInstance} (1 publishes); ` +
        `p99 of each round: spread ${rounds(runs.spread)}, one ${rounds(runs.one)}; ${messages} messages${short(s)}${short(o)}`,
    },
  ];
}

async function post(url: string, path: string, body: unknown, key: string): Promise<any> {
  const res = await fetch(`${url}/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}
