/**
 * Figure 7, a real model: time to first token and tokens per second through `chat/stream`,
 * against the same llama-server (the real-model rig's, scripts/real-models/) called directly in
 * the same run. Targets (issue 18): first-token overhead ≤ 5 ms, throughput ≥ 0.97 of direct.
 *
 * Fair by construction: the direct requests replay, byte for byte, the body Parley sent upstream
 * (its system prompt, tool definitions and whatever else it adds), captured through a loopback
 * proxy from a turn after the server's first (as every timed turn is); the timed Parley talks to
 * llama-server without the proxy. Sampling is greedy
 * (`--temp 0`, fixed seed), so both paths generate the same tokens, which is checked. Requests
 * alternate direct / Parley, the order swapped every pair, after a warm-up.
 *
 * Skipped, with the command to run, when llama-server is not built: building it takes ~10
 * minutes, which a benchmark run should not spend unasked.
 */
import { fmtMs, type BenchContext, type Figure } from '../lib/context';
import type { Row } from '../lib/report';
import { median, percentile, round } from '../lib/stats';
import { timeParley } from '../lib/time-answer';
import { againstLlama, compareAnswers, fmtRate, MESSAGE, TEMPLATE, type Measured } from '../lib/llama-bench';

const FIGURE = '7 real model';
const TARGET_OVERHEAD_MS = 5;
const TARGET_THROUGHPUT = 0.97;

/** What the context budget learns after a turn (src/ai/bound-request.ts) has had time to be learned. */
const SETTLE_MS = 1500;

export const realModelFigure: Figure = {
  id: 'real-model',
  title: FIGURE,
  async run(ctx: BenchContext): Promise<Row[]> {
    const m = await againstLlama(ctx, { figure: FIGURE, measure: 'chat/stream against llama-server', settleMs: SETTLE_MS, request: (p) => timeParley(p.url, p.key, MESSAGE) });
    return Array.isArray(m) ? m : report(ctx, m);
  },
};

function report(ctx: BenchContext, { d, p, upstream, resent }: Measured): Row[] {
  const { n, tokens, same, deterministic, first, rate } = compareAnswers(d, p);
  const dRate = rate.direct;
  const pRate = rate.parley;
  const overhead = median(first.parley) - median(first.direct);
  const ratio = median(pRate) / median(dRate);
  const checks =
    `${tokens} tokens an answer; same text as direct in ${same}/${n}${deterministic ? '' : ' (direct answers differed among themselves)'}` +
    (resent ? `; ${resent} direct request(s) sent again after a reset keep-alive connection` : '');
  ctx.raw['real-model'] = {
    template: TEMPLATE,
    answerTokens: tokens,
    upstreamCalls: upstream.calls,
    upstreamCallsLater: upstream.laterCalls,
    upstreamBodyBytes: upstream.body.length,
    firstTokenMs: { parley: first.parley.map((v) => round(v, 3)), direct: first.direct.map((v) => round(v, 3)) },
    tokensPerS: { parley: pRate.map((v) => round(v, 1)), direct: dRate.map((v) => round(v, 1)) },
    sameText: same,
    directResent: resent,
    deterministic,
  };
  return [
    {
      figure: FIGURE,
      measure: `time to first token, chat/stream vs llama-server direct (median of ${n})`,
      parley: fmtMs(median(first.parley)),
      baseline: fmtMs(median(first.direct)),
      target: `overhead ≤ ${TARGET_OVERHEAD_MS} ms`,
      met: overhead <= TARGET_OVERHEAD_MS,
      detail: `overhead ${overhead >= 0 ? '+' : ''}${fmtMs(overhead)}; p90 ${fmtMs(percentile(first.parley, 90))} (direct ${fmtMs(percentile(first.direct, 90))}); the direct body is Parley's upstream body (${upstream.body.length.toLocaleString('en-US')} bytes, ${TEMPLATE}); upstream calls of a server's first turn: ${upstream.calls.join(', ')}; of a later turn: ${upstream.laterCalls.join(', ')}`,
    },
    {
      figure: FIGURE,
      measure: `tokens per second, first to last text (median of ${n})`,
      parley: fmtRate(median(pRate)),
      baseline: fmtRate(median(dRate)),
      ratio,
      target: `≥ ${TARGET_THROUGHPUT}`,
      met: ratio >= TARGET_THROUGHPUT && same === n,
      detail: `p10 / p90 ${fmtRate(percentile(pRate, 10))} / ${fmtRate(percentile(pRate, 90))} (direct ${fmtRate(percentile(dRate, 10))} / ${fmtRate(percentile(dRate, 90))}); ${checks}`,
    },
  ];
}
