/**
 * What the real-model figures share (figure 7 through `chat/stream`, figure 9 through `/v1`): one
 * llama-server started alike, the body Parley sends it captured through a loopback proxy so the
 * direct requests can replay it byte for byte, and the direct / Parley requests alternated.
 */
import { join } from 'node:path';
import type { BenchContext } from './context';
import { startParley, type Parley } from './parley';
import type { Row } from './report';
import { timeDirect, type TimedAnswer } from './time-answer';
import { cachedLlamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from '../../scripts/real-models/llama-server';
import { forward, startLoopbackProxy } from '../../scripts/real-models/loopback-proxy';

/** A common template (ChatML, tools rendered into the prompt), as the rig's main suite runs. */
export const TEMPLATE = 'Qwen-Qwen2.5-7B-Instruct.jinja';
/** Long enough that the answer's rate, not its first token, dominates the span. */
export const ANSWER_TOKENS = 256;
export const MESSAGE = 'Tell me a story about a cat who finds a red ball.';
const WARMUP = 2;

function providerEnv(apiUrl: string): Record<string, string> {
  // Parley's answer limit (max_tokens) overrides llama-server's --n-predict: both say ANSWER_TOKENS.
  return { PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: apiUrl, PARLEY_AI_API_KEY: 'none', PARLEY_AI_MODEL: 'tiny', PARLEY_AI_ANSWER_TOKENS: String(ANSWER_TOKENS) };
}

/**
 * The rig's llama-server, greedy, or the rows saying why the figure is skipped: building it takes
 * ~10 minutes, which a benchmark run should not spend unasked.
 */
async function startBenchLlama(figure: string, measure: string): Promise<LlamaServer | Row[]> {
  const dir = cachedLlamaServerDir();
  if (!dir) return [{ figure, measure, skipped: 'llama-server is not built: run scripts/real-models/build-llama-server.sh once (~10 minutes), then this figure' }];
  let model: string;
  try {
    model = testModelPath();
  } catch (err) {
    return [{ figure, measure, skipped: (err as Error).message }];
  }
  return startLlamaServer({
    dir,
    model,
    contextTokens: 4096,
    maxAnswerTokens: ANSWER_TOKENS,
    templateFile: join(dir, 'templates', TEMPLATE),
    // Greedy sampling (the server's defaults: Parley sends no sampling options): the same prompt
    // gives the same tokens on both paths, so their rates compare token for token.
    extraArgs: ['--temp', '0', '--seed', '1'],
  });
}

export interface Upstream {
  /** The Chat Completions body of the later turn, as Parley sent it. */
  body: string;
  /** Every upstream call of a server's first turn, and of a later one. */
  calls: string[];
  laterCalls: string[];
}

/**
 * Requests through a Parley behind a recording proxy: every upstream call of a server's first one
 * and of a later one (`settleMs` after, once whatever the first taught the server is learned), and
 * the Chat Completions body the later one sends, as every timed request does.
 */
async function captureUpstream(ctx: BenchContext, llama: LlamaServer, request: (p: Parley) => Promise<unknown>, settleMs: number): Promise<Upstream> {
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
    await request(parley);
    calls = log;
    await Bun.sleep(settleMs);
    log = [];
    await request(parley);
  } finally {
    await parley?.stop();
    proxy.stop();
  }
  if (!body) throw new Error(`Parley sent no chat completion upstream (calls: ${log.join(', ') || 'none'})`);
  return { body, calls, laterCalls: log };
}

/**
 * After a warm-up, `pairs` requests each, alternating direct / Parley with the order swapped every
 * pair, so neither path always runs right after the other and the machine's swings fall on both.
 */
async function alternate(ctx: BenchContext, pairs: number, direct: () => Promise<TimedAnswer>, viaParley: () => Promise<TimedAnswer>): Promise<{ d: TimedAnswer[]; p: TimedAnswer[] }> {
  for (let i = 0; i < WARMUP; i++) {
    await direct();
    await viaParley();
  }
  ctx.log(`${pairs} requests each, alternating direct / Parley`);
  const d: TimedAnswer[] = [];
  const p: TimedAnswer[] = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) d.push(await direct());
    p.push(await viaParley());
    if (i % 2 === 1) d.push(await direct());
  }
  return { d, p };
}

export interface Measured {
  d: TimedAnswer[];
  p: TimedAnswer[];
  upstream: Upstream;
  /** Direct requests sent again after a reset keep-alive connection. */
  resent: number;
}

/**
 * A figure's whole run: llama-server started (or the rows saying why not), a Parley in front of
 * it, the upstream body captured, then direct and Parley alternated, `request` timing one request
 * through Parley. 20 pairs, 6 with `--quick`.
 */
export async function againstLlama(ctx: BenchContext, opts: { figure: string; measure: string; settleMs: number; request: (p: Parley) => Promise<TimedAnswer> }): Promise<Row[] | Measured> {
  const llama = await startBenchLlama(opts.figure, opts.measure);
  if (Array.isArray(llama)) return llama;
  let parley: Parley | undefined;
  try {
    parley = await startParley(ctx.bin, providerEnv(llama.apiUrl));
    ctx.log('capturing the body Parley sends upstream (through a loopback proxy)');
    const upstream = await captureUpstream(ctx, llama, opts.request, opts.settleMs);
    const completions = `${llama.apiUrl}/chat/completions`;
    let resent = 0;
    const { d, p } = await alternate(ctx, ctx.quick ? 6 : 20, () => timeDirect(completions, upstream.body, () => resent++), () => opts.request(parley!));
    return { d, p, upstream, resent };
  } finally {
    await parley?.stop();
    await llama.stop();
  }
}

export const tokensPerS = (tokens: number, spanMs: number) => (tokens > 1 && spanMs > 0 ? ((tokens - 1) / spanMs) * 1000 : Number.NaN);
export const fmtRate = (n: number) => `${Math.round(n).toLocaleString('en-US')} tok/s`;

export interface Compared {
  n: number;
  /** Tokens of the direct answer. */
  tokens: number;
  /** Parley answers with the direct answer's text. */
  same: number;
  /** Whether every direct answer had the same text. */
  deterministic: boolean;
  first: { parley: number[]; direct: number[] };
  rate: { parley: number[]; direct: number[] };
}

/**
 * The two paths' first tokens and rates. The direct run's token count for both when the text is
 * the same (a Parley delta may carry more than one token); Parley's own count of pieces otherwise.
 */
export function compareAnswers(d: TimedAnswer[], p: TimedAnswer[]): Compared {
  const text = d[0]!.text;
  const tokens = d[0]!.pieces;
  return {
    n: d.length,
    tokens,
    same: p.filter((a) => a.text === text).length,
    deterministic: d.every((a) => a.text === text),
    first: { parley: p.map((a) => a.firstMs), direct: d.map((a) => a.firstMs) },
    rate: { parley: p.map((a) => tokensPerS(a.text === text ? tokens : a.pieces, a.spanMs)), direct: d.map((a) => tokensPerS(a.pieces, a.spanMs)) },
  };
}
