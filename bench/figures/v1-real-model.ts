/**
 * Figure 9, a real model through the OpenAI-compatible door: time to first token and tokens per
 * second of a streamed `POST /v1/chat/completions`, against the same llama-server called directly
 * in the same run. Targets (issue 34): first-token overhead ≤ 5 ms (p50; p90 reported), throughput
 * ≥ 0.97 of direct.
 *
 * The caller's request is what an OpenAI client sends (one user message, `max_tokens`,
 * `stream_options.include_usage`); Parley passes it through with the model's upstream id. The
 * direct requests replay, byte for byte, the body Parley sent upstream, captured through a
 * loopback proxy; the timed Parley talks to llama-server without it. Greedy sampling, so both
 * paths generate the same tokens (checked); direct / Parley alternate, the order swapped every
 * pair, after a warm-up; through the compiled binary.
 */
import { fmtMs, type BenchContext, type Figure } from '../lib/context';
import type { Row } from '../lib/report';
import { median, percentile, round } from '../lib/stats';
import { timeV1 } from '../lib/time-answer';
import { againstLlama, ANSWER_TOKENS, compareAnswers, fmtRate, MESSAGE, TEMPLATE, type Measured } from '../lib/llama-bench';

const FIGURE = '9 /v1 real model';
const TARGET_OVERHEAD_MS = 5;
const TARGET_THROUGHPUT = 0.97;
/** The catalogue id of the model the settings' connection serves (`env-ai/<PARLEY_AI_MODEL>`). */
const MODEL = 'env-ai/tiny';

const CALLER_BODY = JSON.stringify({
  model: MODEL,
  messages: [{ role: 'user', content: MESSAGE }],
  max_tokens: ANSWER_TOKENS,
  stream: true,
  stream_options: { include_usage: true },
});

export const v1RealModelFigure: Figure = {
  id: 'v1-real-model',
  title: FIGURE,
  async run(ctx: BenchContext): Promise<Row[]> {
    const m = await againstLlama(ctx, { figure: FIGURE, measure: '/v1/chat/completions against llama-server', settleMs: 0, request: (p) => timeV1(p.url, p.key, CALLER_BODY) });
    return Array.isArray(m) ? m : report(ctx, m);
  },
};

const signed = (ms: number) => `${ms >= 0 ? '+' : ''}${fmtMs(ms)}`;

function report(ctx: BenchContext, { d, p, upstream, resent }: Measured): Row[] {
  const { n, tokens, same, deterministic, first, rate } = compareAnswers(d, p);
  const overhead = { p50: median(first.parley) - median(first.direct), p90: percentile(first.parley, 90) - percentile(first.direct, 90) };
  const ratio = median(rate.parley) / median(rate.direct);
  ctx.raw['v1-real-model'] = {
    template: TEMPLATE,
    answerTokens: tokens,
    callerBody: CALLER_BODY,
    upstreamBody: upstream.body,
    upstreamCalls: upstream.calls,
    upstreamCallsLater: upstream.laterCalls,
    firstTokenMs: { parley: first.parley.map((v) => round(v, 3)), direct: first.direct.map((v) => round(v, 3)) },
    tokensPerS: { parley: rate.parley.map((v) => round(v, 1)), direct: rate.direct.map((v) => round(v, 1)) },
    sameText: same,
    directResent: resent,
    deterministic,
  };
  const checks =
    `${tokens} tokens an answer; same text as direct in ${same}/${n}${deterministic ? '' : ' (direct answers differed among themselves)'}` +
    (resent ? `; ${resent} direct request(s) sent again after a reset keep-alive connection` : '');
  return [
    {
      figure: FIGURE,
      measure: `time to first token, /v1/chat/completions vs llama-server direct (median of ${n})`,
      parley: fmtMs(median(first.parley)),
      baseline: fmtMs(median(first.direct)),
      target: `overhead ≤ ${TARGET_OVERHEAD_MS} ms`,
      met: overhead.p50 <= TARGET_OVERHEAD_MS,
      detail: `overhead ${signed(overhead.p50)} at the median, ${signed(overhead.p90)} at p90 (p90 ${fmtMs(percentile(first.parley, 90))}, direct ${fmtMs(percentile(first.direct, 90))}); the direct body is Parley's upstream body (${upstream.body.length.toLocaleString('en-US')} bytes against the caller's ${CALLER_BODY.length.toLocaleString('en-US')}, ${TEMPLATE}); upstream calls of a later request: ${upstream.laterCalls.join(', ')}`,
    },
    {
      figure: FIGURE,
      measure: `tokens per second, first to last text (median of ${n})`,
      parley: fmtRate(median(rate.parley)),
      baseline: fmtRate(median(rate.direct)),
      ratio,
      target: `≥ ${TARGET_THROUGHPUT}`,
      met: ratio >= TARGET_THROUGHPUT && same === n,
      detail: `p10 / p90 ${fmtRate(percentile(rate.parley, 10))} / ${fmtRate(percentile(rate.parley, 90))} (direct ${fmtRate(percentile(rate.direct, 10))} / ${fmtRate(percentile(rate.direct, 90))}); ${checks}`,
    },
  ];
}
