/**
 * Figure 1, write: `groupChat/sendGroupMessage` by API key (authentication, membership check,
 * insert, publish) at 32 connections, with 0 and with 100 subscribers on the group, against
 * baseline (a), a raw Bun.serve + bun:sqlite insert. Target: ≥ 60 % of (a).
 */
import { startBaseline } from '../lib/baselines';
import { assertClean, best, fmtInt, latencyDetail, loadPoint, ratioRow, type BenchContext, type Figure } from '../lib/context';
import type { LoadResult } from '../lib/load';
import { callOperation, startParley, Unavailable, type Parley } from '../lib/parley';
import { rssMB, sampleRss } from '../lib/proc';
import type { Row } from '../lib/report';
import { startSubscribers } from '../lib/subscribers';

const CONNECTIONS = 32;
const SUBSCRIBERS = 100;
const TARGET = 0.6;
const message = 'Hello from the write benchmark: a message of ordinary length.';

/** The measured write: one group message by API key (bench/cluster.ts runs it on PostgreSQL too). */
export const sendGroupMessageSpec = (parley: Parley, groupChatId: string) => ({
  url: `${parley.url}/api/groupChat/sendGroupMessage`,
  headers: { 'x-api-key': parley.key },
  body: { groupChatId, message },
  connections: CONNECTIONS,
});

export const writeFigure: Figure = {
  id: 'write',
  title: '1 write',
  async run(ctx: BenchContext): Promise<Row[]> {
    const figure = '1 write';
    const base = await startBaseline(ctx, 'write-server.ts');
    const parley = await startParley(ctx.bin);
    try {
      const aSpec = { url: base.url, body: { groupChatId: 'group-1', message }, connections: CONNECTIONS };
      let group: { id: string };
      try {
        group = await callOperation(parley, 'groupChat/createGroupChat', { name: 'Write benchmark' });
      } catch (err) {
        if (!(err instanceof Unavailable)) throw err;
        const a = await loadPoint(ctx, aSpec);
        ctx.raw.write = { baselineA: a };
        return [
          { figure, measure: `baseline (a) alone, ${CONNECTIONS} conn`, baseline: `${fmtInt(a.rps)} req/s`, detail: latencyDetail(a) },
          { figure, measure: 'sendGroupMessage, 0 / 100 subscribers', skipped: err.message },
        ];
      }
      const pSpec = sendGroupMessageSpec(parley, group.id);
      ctx.log('warming up');
      await loadPoint(ctx, { ...aSpec, durationS: 1 });
      await loadPoint(ctx, { ...pSpec, durationS: 1 });

      let a: LoadResult | undefined, p0: LoadResult | undefined, p100: LoadResult | undefined;
      let subsOpen = 0;
      let rssPeak = 0;
      let baseRssPeak = 0;
      for (let round = 0; round < ctx.rounds; round++) {
        ctx.log(`round ${round + 1}/${ctx.rounds}: baseline (a), 0 subscribers, ${SUBSCRIBERS} subscribers`);
        const baseRss = sampleRss(base.pid);
        a = best(a, await loadPoint(ctx, aSpec));
        baseRssPeak = Math.max(baseRssPeak, baseRss.stop());
        const rss = sampleRss(parley.pid);
        p0 = best(p0, await loadPoint(ctx, pSpec));
        rssPeak = Math.max(rssPeak, rss.stop());
        const subs = await startSubscribers(ctx.benchDir, { url: parley.url, keys: [parley.key], groupChatId: group.id, count: SUBSCRIBERS, mode: 'drain' });
        subsOpen = subs.ready.open;
        p100 = best(p100, await loadPoint(ctx, pSpec));
        await subs.stop();
      }
      assertClean('sendGroupMessage', p0!);
      assertClean('sendGroupMessage with subscribers', p100!);
      ctx.raw.write = { baselineA: a, subscribers0: p0, subscribers100: p100, subscribersOpen: subsOpen, rssPeakMB: rssPeak, baselineRssPeakMB: baseRssPeak, rssAfterMB: rssMB(parley.pid) };
      const row = (measure: string, r: LoadResult, extra = ''): Row =>
        ratioRow(
          {
            figure,
            measure,
            parley: `${fmtInt(r.rps)} req/s`,
            baseline: `${fmtInt(a!.rps)} req/s`,
            target: `≥ ${TARGET.toFixed(2)}`,
            detail: `${latencyDetail(r)}; (a) ${latencyDetail(a!)}${extra}`,
          },
          r.rps / a!.rps,
          TARGET,
        );
      const short = subsOpen < SUBSCRIBERS ? `; only ${subsOpen} of ${SUBSCRIBERS} streams opened` : '';
      return [
        row(`sendGroupMessage, 0 subscribers, ${CONNECTIONS} conn`, p0!),
        row(`sendGroupMessage, ${SUBSCRIBERS} subscribers, ${CONNECTIONS} conn`, p100!, short),
      ];
    } finally {
      await Promise.all([base.stop(), parley.stop()]);
    }
  },
};
