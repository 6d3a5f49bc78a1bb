import type { CallUsage } from './ai.types';
import { estimateTokens, IMAGE_TOKENS } from './count-tokens';

/**
 * A call's usage from the provider's own report, in any of the shapes OpenAI's APIs give it:
 * Chat Completions (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`,
 * `completion_tokens_details.reasoning_tokens`), Responses and embeddings (`input_tokens`,
 * `output_tokens`, `input_tokens_details`, `output_tokens_details`), images (`input_tokens`,
 * `output_tokens`). Undefined when there is none.
 */
export function reportedUsage(u: unknown): CallUsage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const r = u as Record<string, any>;
  const input = r.prompt_tokens ?? r.input_tokens;
  const output = r.completion_tokens ?? r.output_tokens ?? (typeof r.total_tokens === 'number' && typeof input === 'number' ? r.total_tokens - input : 0);
  if (typeof input !== 'number' && typeof output !== 'number') return undefined;
  return {
    inputTokens: count(input),
    outputTokens: count(output),
    cachedTokens: count(r.prompt_tokens_details?.cached_tokens ?? r.input_tokens_details?.cached_tokens),
    reasoningTokens: count(r.completion_tokens_details?.reasoning_tokens ?? r.output_tokens_details?.reasoning_tokens),
    estimated: false,
  };
}

const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

/**
 * Parley's count when the provider reported nothing (a server that ignores `include_usage`, a call
 * stopped half-way): the request's text and images, and the text that came back, with the context
 * budget's estimator (count-tokens.ts, meant to run over rather than under). Marked `estimated`.
 */
export function estimatedUsage(messages: readonly unknown[], output: string): CallUsage {
  return { inputTokens: requestTokens(messages), outputTokens: output ? estimateTokens(output) : 0, cachedTokens: 0, reasoningTokens: 0, estimated: true };
}

/** The tokens of a request's messages in any of the wire shapes (a string, or parts of text and images), a few a message for its framing. */
export function requestTokens(messages: readonly unknown[]): number {
  let tokens = 0;
  const add = (content: unknown): void => {
    if (typeof content === 'string') tokens += estimateTokens(content);
    else if (Array.isArray(content))
      for (const part of content as Record<string, unknown>[]) {
        if (!part || typeof part !== 'object') continue;
        if (/image/.test(String(part.type))) tokens += IMAGE_TOKENS;
        else add(part.text ?? part.content ?? part.output ?? part.arguments);
      }
  };
  for (const m of messages) {
    tokens += 4;
    if (typeof m === 'string') add(m);
    else if (m && typeof m === 'object') {
      const msg = m as Record<string, unknown>;
      add(msg.content ?? msg.text ?? msg.output);
      if (Array.isArray(msg.images)) tokens += msg.images.length * IMAGE_TOKENS;
      if (Array.isArray(msg.tool_calls)) add(JSON.stringify(msg.tool_calls));
    }
  }
  return tokens;
}
