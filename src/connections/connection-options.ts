import type { ConnectionRow } from '../db/schema';

/**
 * What each kind of connection takes, the names and meanings of the environment settings they
 * replace (docs/configuration.md). Every option is optional: a missing one takes the setting's
 * default, so a row added with a base URL alone works.
 */
export type ConnectionKind = ConnectionRow['kind'];
export type CapabilityMode = 'auto' | 'on' | 'off';

export interface ConnectionOptions {
  /** chat: the default model; embeddings/images/stt/tts/video: the model named in each request. */
  model?: string;
  /** chat: deep research's model when a request names none. */
  researchModel?: string;
  /** openai-chat: offer tools / send images (PARLEY_AI_TOOLS, PARLEY_AI_VISION). */
  tools?: CapabilityMode;
  vision?: CapabilityMode;
  /** chat: the context window (0: ask the server) and the longest answer (PARLEY_AI_CONTEXT_TOKENS, PARLEY_AI_ANSWER_TOKENS). */
  contextTokens?: number;
  answerTokens?: number;
  /** chat: seconds without a byte from the server before the turn stops (PARLEY_AI_IDLE_TIMEOUT_S). */
  idleTimeoutS?: number;
  /** anthropic: tokens the model may think before answering (0: no extended thinking). */
  thinkingTokens?: number;
  /** embeddings */
  dimensions?: number;
  batch?: number;
  /** embeddings, images: seconds one request may take; video: one job, from creation to download. */
  timeoutS?: number;
  /** video: a clip's length in seconds (PARLEY_VIDEO_SECONDS). */
  seconds?: number;
  /** images: the size asked for. */
  size?: string;
  /** tts */
  voice?: string;
  maxChars?: number;
  /** stt */
  maxBytes?: number;
}

/** Which APIs each kind speaks. */
export const API_OF_KIND: Record<ConnectionKind, readonly string[]> = {
  chat: ['openai-chat', 'openai-responses', 'anthropic'],
  embeddings: ['openai'],
  images: ['openai'],
  stt: ['openai'],
  tts: ['openai'],
  search: ['searxng'],
  video: ['openai'],
};

export const KINDS = Object.keys(API_OF_KIND) as ConnectionKind[];

/** The options a kind reads: the others are refused when an admin sets them, so a typo is not lost quietly. */
export const OPTIONS_OF_KIND: Record<ConnectionKind, readonly (keyof ConnectionOptions)[]> = {
  chat: ['model', 'researchModel', 'tools', 'vision', 'contextTokens', 'answerTokens', 'idleTimeoutS', 'thinkingTokens'],
  embeddings: ['model', 'dimensions', 'batch', 'timeoutS'],
  images: ['model', 'size', 'timeoutS'],
  stt: ['model', 'maxBytes'],
  tts: ['model', 'voice', 'maxChars'],
  search: [],
  video: ['model', 'seconds', 'timeoutS'],
};

/** A chat connection's default model when its options name none, by API. */
const CHAT_MODEL_DEFAULT: Record<string, string> = { anthropic: 'claude-sonnet-4-6', 'openai-responses': 'gpt-4.1-mini', 'openai-chat': 'gpt-4.1-mini' };

export const optionsOf = (row: Pick<ConnectionRow, 'options'>): ConnectionOptions => (row.options ?? {}) as ConnectionOptions;

/** A chat connection's default model. */
export const chatModelOf = (row: Pick<ConnectionRow, 'options' | 'api'>): string => optionsOf(row).model || CHAT_MODEL_DEFAULT[row.api] || 'default';

/**
 * A chat connection's research model: its option, else the environment's setting for the
 * environment's own row (as before connections), else its chat model (an admin's row names
 * what it has; OpenAI's deep-research model is not on every server).
 */
export const researchModelOf = (row: Pick<ConnectionRow, 'options' | 'api' | 'source'>, envResearchModel: string): string =>
  optionsOf(row).researchModel || (row.source === 'env' ? envResearchModel : chatModelOf(row));
