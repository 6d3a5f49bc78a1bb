import type { AppDeps } from '../deps';
import { estimateTokens, IMAGE_TOKENS } from '../ai/count-tokens';
import type { UsageCaller, UsageKind, UsageReport } from '../usage/usage.types';
import { answerLimitOf, imagesOf, textOf, type ChatRequest } from './chat-request';
import type { AnswerCollector } from './collect-answer';
import type { V1Target } from './upstream-call';
import type { V1Context } from './v1-route';

/**
 * Metering of a `/v1` call through the usage seam (src/usage/usage.types.ts): reserved before
 * anything goes upstream (a `QuotaError` there is the caller's 429), then settled once with what
 * the provider reported (or Parley's estimate, marked so, when it reported nothing: a stream the
 * caller left), or released when the call never reached the provider.
 */
export interface Meter {
  settle(actual: UsageReport): Promise<void>;
  release(): Promise<void>;
}

/**
 * A call about to go upstream: for a stream, one of the caller's stream slots first (over the
 * cap: 429 before anything is reserved), then the usage reserved; the slot given back if the
 * reservation is refused. A call made with an assistant is the assistant's on the usage row.
 */
export async function beginCall(ctx: V1Context, target: V1Target, streamed: boolean, estimate: UsageReport): Promise<{ meter: Meter; releaseSlot: () => void }> {
  const releaseSlot = streamed ? await ctx.holdStream() : () => {};
  const caller = target.assistant ? { ...ctx.caller, assistantId: target.assistant.id } : ctx.caller;
  try {
    return { meter: await startMeter(ctx.deps, caller, 'v1', estimate), releaseSlot };
  } catch (err) {
    releaseSlot();
    throw err;
  }
}

export async function startMeter(deps: AppDeps, caller: UsageCaller, kind: UsageKind, estimate: UsageReport): Promise<Meter> {
  const reservation = await deps.usage.reserve(caller, kind, estimate);
  let done = false;
  // Metering must not fail an answer already given: a failure is the operator's to read.
  const once = async (what: string, fn: () => Promise<void>) => {
    if (done) return;
    done = true;
    await fn().catch((err) => deps.log.error(`usage ${what} failed`, { kind, cause: err instanceof Error ? err.message : String(err) }));
  };
  return {
    settle: (actual) => once('settle', () => deps.usage.settle(reservation, actual)),
    release: () => once('release', () => deps.usage.release(reservation)),
  };
}

/** Tokens of a request's messages and tools, estimated (src/ai/count-tokens.ts): an upper bound, not the server's count. */
export function estimateInput(req: Pick<ChatRequest, 'messages' | 'tools'>): number {
  let tokens = req.tools?.length ? estimateTokens(JSON.stringify(req.tools)) : 0;
  for (const m of req.messages) {
    tokens += estimateTokens(textOf(m.content)) + imagesOf(m.content).length * IMAGE_TOKENS;
    for (const c of m.tool_calls ?? []) tokens += estimateTokens(`${c.function?.name ?? ''}${c.function?.arguments ?? ''}`);
  }
  return tokens;
}

export const chatEstimate = (target: V1Target, req: ChatRequest, inputTokens: number): UsageReport => ({
  connectionId: target.connection.id,
  model: target.id,
  inputTokens,
  outputTokens: answerLimitOf(req) ?? 0,
  estimated: true,
});

/** What an answer cost: the provider's report, or estimated from what was said. */
export function chatReport(target: V1Target, answer: AnswerCollector, inputTokens: number): UsageReport {
  const base = { connectionId: target.connection.id, model: target.id };
  const u = answer.usage;
  if (u)
    return {
      ...base,
      inputTokens: u.prompt_tokens ?? 0,
      outputTokens: u.completion_tokens ?? 0,
      cachedTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
      reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
      estimated: false,
    };
  const said = answer.text + answer.reasoning + answer.toolCalls.map((c) => c.function.name + c.function.arguments).join('');
  return { ...base, inputTokens, outputTokens: estimateTokens(said), estimated: true };
}
