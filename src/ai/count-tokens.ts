/** Counting tokens for the context budget (fit-context.ts): the server's count where it has one, else an estimate. */

export interface TokenCounter {
  /** Whether counts come from the model's own tokenizer. */
  exact: boolean;
  /** Tokens of a whole Chat Completions request (`messages` and `tools` in wire form) as the server renders it. */
  countRequest(messages: unknown[], tools: unknown[]): Promise<number>;
  /** Tokens of one text, without any template around it. */
  countText(text: string): Promise<number>;
}

/**
 * An image's cost, counted the same whatever its size: projectors spend from 64 (SmolVLM) to a
 * few thousand tokens (Qwen2-VL on a large photo); 768 covers the common ones (Gemma 3: 256,
 * LLaVA 1.5: 576).
 */
export const IMAGE_TOKENS = 768;

/**
 * Tokens of `text` without a tokenizer: one per three bytes of UTF-8. Real tokenizers average
 * about four bytes of English per token and one CJK character (three bytes) per token, so this
 * overcounts the common cases on purpose: a budget that is too small drops an old turn more than
 * needed, one that is too large breaks the turn.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 3);
}
