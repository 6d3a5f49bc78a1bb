/** Counting tokens for the context budget (fit-context.ts): the server's count where it has one, else an estimate. */

export interface TokenCounter {
  /** Whether counts come from the model's own tokenizer. */
  exact: boolean;
  /** Tokens of a whole Chat Completions request (`messages` and `tools` in wire form) as the server renders it. */
  countRequest(messages: unknown[], tools: unknown[]): Promise<number>;
  /** Tokens of one text, without any template around it. */
  countText(text: string): Promise<number>;
  /**
   * At least countRequest's answer, known without asking the server (bound-request.ts); undefined
   * until learned for the request's shape.
   */
  boundRequest?(messages: unknown[], tools: unknown[]): number | undefined;
  /** A request expected soon (this shape again, or the next turn's): what boundRequest needs is learned meanwhile. */
  expectRequest?(messages: unknown[], tools: unknown[]): void;
}

/**
 * An image's cost, counted the same whatever its size: projectors spend from 64 (SmolVLM) to a
 * few thousand tokens (Qwen2-VL on a large photo); 768 covers the common ones (Gemma 3: 256,
 * LLaVA 1.5: 576).
 */
export const IMAGE_TOKENS = 768;

/**
 * Tokens of `text` without a tokenizer, meant to run over rather than under the true count:
 * - a digit is a token (Llama, Qwen, Mistral and Gemma split numbers into single digits);
 * - other ASCII, one token per three characters (English averages about four per token);
 * - other characters, one token per two bytes of UTF-8 (a CJK character, three bytes, is one
 *   token or two; an emoji, four bytes, two or three).
 */
export function estimateTokens(text: string): number {
  let digits = 0;
  let ascii = 0;
  let otherBytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if (c < 128) ascii++;
    else if (c >= 0xd800 && c <= 0xdbff) {
      otherBytes += 4;
      i++;
    } else otherBytes += c < 0x800 ? 2 : 3;
  }
  return digits + Math.ceil(ascii / 3) + Math.ceil(otherBytes / 2);
}
