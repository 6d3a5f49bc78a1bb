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
import { join } from 'node:path';
import { fmtMs, type BenchContext, type Figure } from '../lib/context';
import { startParley, type Parley } from '../lib/parley';
import type { Row } from '../lib/report';
import { median, percentile, round } from '../lib/stats';
import { timeDirect, timeParley, type TimedAnswer } from '../lib/time-answer';
import { cachedLlamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from '../../scripts/real-models/llama-server';
import { forward, startLoopbackProxy } from '../../scripts/real-models/loopback-proxy';

const FIGURE = '7 real model';
const TARGET_OVERHEAD_MS = 5;
const TARGET_THROUGHPUT = 0.97;
/** A common template (ChatML, tools rendered into the prompt), as the rig's main suite runs. */
const TEMPLATE = 'Qwen-Qwen2.5-7B-Instruct.jinja';
/** Long enough that the answer's rate, not its first token, dominates the span. */
const ANSWER_TOKENS = 256;
const MESSAGE = 'Tell me a story about a cat who finds a red ball.';
const WARMUP = 2;

function providerEnv(apiUrl: string): Record<string, string> {
  // Parley's answer limit (max_tokens) overrides llama-server's --n-predict: both say ANSWER_TOKENS.
  return { PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: apiUrl, PARLEY_AI_API_KEY: 'none', PARLEY_AI_MODEL: 'tiny', PARLEY_AI_ANSWER_TOKENS: String(ANSWER_TOKENS) };
}

/** What the context budget learns after a turn (src/ai/bound-request.ts) has had time to be learned. */
const SETTLE_MS = 1500;

/**
 * Turns through a Parley behind a recording proxy: every upstream call of a server's first turn
 * and of a later one (once what the first taught the context budget is learned), and the Chat
 * Completions body the later one sends, as every timed turn does.
 */
async function captureUpstream(ctx: BenchContext, llama: LlamaServer): Promise<{ body: string; calls: string[]; laterCalls: string[] }> {
  let body: string | undefined;
  let log: string[] = [];
  const proxy = startLoopbackProxy(async (req) => {
    const text = req.method === 'POST' ? await req.text() : undefined;
    const path = new URL(req.url).pathname;
    log.push(`${req.method} ${path}`);
    if (path.endsWith('/chat/completions')) body = text;
    return forward(llama.url, req, text);
  });
  let parley: Parley | undefined;
  let calls: string[];
  try {
    parley = await startParley(ctx.bin, providerEnv(proxy.apiUrl));
    await timeParley(parley.url, parley.key, MESSAGE);
    calls = log;
    await Bun.sleep(SETTLE_MS);
    log = [];
    await timeParley(parley.url, parley.key, MESSAGE);
  } finally {
    await parley?.stop();
    proxy.stop();
  }
  if (!body) throw new Error(`Parley sent no chat completion upstream (calls: ${log.join(', ') || 'none'})`);
  return { body, calls, laterCalls: log };
}

const tokensPerS = (tokens: number, spanMs: number) => (tokens > 1 && spanMs > 0 ? ((tokens - 1) / spanMs) * 1000 : Number.NaN);
const fmtRate = (n: number) => `${Math.round(n).toLocaleString('en-US')} tok/s`;

export const realModelFigure: Figure = {
  id: 'real-model',
  title: FIGURE,
  async run(ctx: BenchContext): Promise<Row[]> {
    const dir = cachedLlamaServerDir();
    if (!dir) return [{ figure: FIGURE, measure: 'chat/stream against llama-server', skipped: 'llama-server is not built: run scripts/real-models/build-llama-server.sh once (~10 minutes), then this figure' }];
    let model: string;
    try {
      model = testModelPath();
    } catch (err) {
      return [{ figure: FIGURE, measure: 'chat/stream against llama-server', skipped: (err as Error).message }];
    }
    const pairs = ctx.quick ? 6 : 20;
    const llama = await startLlamaServer({
      dir,
      model,
      contextTokens: 4096,
      maxAnswerTokens: ANSWER_TOKENS,
      templateFile: join(dir, 'templates', TEMPLATE),
      // Greedy sampling (the server's defaults: Parley sends no sampling options): the same prompt
      // gives the same tokens on both paths, so their rates compare token for token.
      extraArgs: ['--temp', '0', '--seed', '1'],
    });
    let parley: Parley | undefined;
    try {
      parley = await startParley(ctx.bin, providerEnv(llama.apiUrl));
      ctx.log('capturing the body Parley sends upstream (through a loopback proxy)');
      const upstream = await captureUpstream(ctx, llama);
      const completions = `${llama.apiUrl}/chat/completions`;
      let resent = 0;
      const direct = () => timeDirect(completions, upstream.body, () => resent++);
      const viaParley = () => timeParley(parley!.url, parley!.key, MESSAGE);
      for (let i = 0; i < WARMUP; i++) {
        await direct();
        await viaParley();
      }
      ctx.log(`${pairs} requests each, alternating direct / Parley`);
      const d: TimedAnswer[] = [];
      const p: TimedAnswer[] = [];
      // The order swaps every pair: neither path always runs right after the other.
      for (let i = 0; i < pairs; i++) {
        if (i % 2 === 0) d.push(await direct());
        p.push(await viaParley());
        if (i % 2 === 1) d.push(await direct());
      }
      return report(ctx, d, p, upstream, resent);
    } finally {
      await parley?.stop();
      await llama.stop();
    }
  },
};

function report(ctx: BenchContext, d: TimedAnswer[], p: TimedAnswer[], upstream: { body: string; calls: string[]; laterCalls: string[] }, resent: number): Row[] {
  const text = d[0]!.text;
  const tokens = d[0]!.pieces;
  const deterministic = d.every((a) => a.text === text);
  const same = p.filter((a) => a.text === text).length;
  // The direct run's token count for both when the text is the same (a Parley delta may carry
  // more than one token); Parley's own count of deltas otherwise.
  const dRate = d.map((a) => tokensPerS(a.pieces, a.spanMs));
  const pRate = p.map((a) => tokensPerS(a.text === text ? tokens : a.pieces, a.spanMs));
  const first = { parley: p.map((a) => a.firstMs), direct: d.map((a) => a.firstMs) };
  const overhead = median(first.parley) - median(first.direct);
  const ratio = median(pRate) / median(dRate);
  const n = d.length;
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
