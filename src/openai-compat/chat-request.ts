import { openAiInvalid } from '../http/errors';
import { checkImageUrl, type ImageUrlPolicy } from '../net/image-url';

/**
 * A Chat Completions request as OpenAI's API takes it, and its streamed chunks: what the `/v1`
 * door receives, sends to an `openai-chat` connection as it came (model swapped), and translates
 * for the other kinds of connection (upstream-*.ts). Only what Parley reads is typed; everything
 * else rides along untouched.
 */
export interface ToolCallWire {
  index?: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content?: string | ContentPart[] | null;
  tool_calls?: ToolCallWire[];
  tool_call_id?: string;
  name?: string;
  [key: string]: unknown;
}

export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } } | { type: string; [key: string]: unknown };

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  tools?: FunctionTool[];
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };
  parallel_tool_calls?: boolean;
  response_format?: { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; json_schema: { name?: string; schema?: Record<string, unknown>; strict?: boolean; description?: string } };
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  n?: number | null;
  /** Parley's: keep the exchange as a conversation of the caller's (docs/openai-api.md). Never sent upstream. */
  store?: boolean | null;
  [key: string]: unknown;
}

export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: ToolCallWire[];
  refusal?: string | null;
  [key: string]: unknown;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: number; delta: ChunkDelta; finish_reason: string | null; logprobs?: unknown }[];
  usage?: WireUsage | null;
  [key: string]: unknown;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/**
 * The request checked as far as Parley needs it (OpenAI's own checks are the upstream's): a model,
 * messages with known roles, one choice, image URLs the model server may be given (the rule of
 * Parley's own turns, src/net/image-url.ts: it could otherwise be made to fetch from the LAN).
 * Each refusal is a 400 naming its parameter.
 */
export function checkChatRequest(body: unknown, images: ImageUrlPolicy): ChatRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw openAiInvalid('The request body must be a JSON object.');
  const req = body as ChatRequest;
  if (typeof req.model !== 'string' || !req.model) throw openAiInvalid('You must provide a model parameter (GET /v1/models lists them).', 'model');
  if (!Array.isArray(req.messages) || !req.messages.length) throw openAiInvalid('messages must be a non-empty array.', 'messages');
  checkOneChoice(req.n);
  if (req.stream != null && typeof req.stream !== 'boolean') throw openAiInvalid('stream must be a boolean.', 'stream');
  if (req.tools != null && (!Array.isArray(req.tools) || req.tools.some((t) => t?.type !== 'function' || typeof t.function?.name !== 'string')))
    throw openAiInvalid('tools must be an array of {type: "function", function: {name, description?, parameters?}}.', 'tools');
  req.messages.forEach((m, i) => {
    if (!m || typeof m !== 'object' || !ROLES.has(m.role)) throw openAiInvalid(`messages[${i}].role must be one of system, developer, user, assistant or tool.`, `messages[${i}].role`);
    if (!Array.isArray(m.content)) return;
    m.content.forEach((part, j) => {
      if (part?.type !== 'image_url') return;
      const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
      const where = `messages[${i}].content[${j}].image_url.url`;
      if (typeof url !== 'string') throw openAiInvalid(`${where} must be a string.`, where);
      const checked = checkImageUrl(url, images);
      if (!checked.ok) throw openAiInvalid(`The image URL ${where} ${checked.reason}.`, where, 'invalid_image_url');
      (part as { image_url: { url: string } }).image_url.url = checked.url;
    });
  });
  return req;
}

/** `n` other than 1 is refused: one answer a request (docs/openai-api.md). */
export function checkOneChoice(n: unknown): void {
  if (n != null && n !== 1)
    throw openAiInvalid('Parley answers with one choice a request: n must be 1 (send the request again for another answer).', 'n', 'unsupported_value');
}

/** The text of a message's content, its parts' texts joined (images and other parts left out). */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (p?.type === 'text' || p?.type === 'input_text' || p?.type === 'output_text' ? String((p as { text?: unknown }).text ?? '') : ''))
    .filter(Boolean)
    .join('\n');
}

/** The image URLs of a message's content, in order. */
export function imagesOf(content: ChatMessage['content']): { url: string; detail?: string }[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((p) => (p?.type === 'image_url' ? [(p as { image_url: { url: string; detail?: string } }).image_url] : []));
}

/** The answer limit the caller set (`max_completion_tokens` wins, as at OpenAI), if any. */
export const answerLimitOf = (req: Pick<ChatRequest, 'max_tokens' | 'max_completion_tokens'>): number | undefined =>
  (typeof req.max_completion_tokens === 'number' ? req.max_completion_tokens : undefined) ?? (typeof req.max_tokens === 'number' ? req.max_tokens : undefined);
