import { AiError } from '../ai/ai.types';
import { IdleLimit } from '../ai/upstream';
import type { ChatChunk, ChatRequest } from './chat-request';
import { joinUrl, postUpstream, readUpstream, type ChunkBatches, type V1Target } from './upstream-call';

/**
 * An `openai-chat` connection (any OpenAI-compatible Chat Completions server): the caller's
 * request goes as it came, every parameter Parley does not own included (tools, tool_choice,
 * response_format, sampling, stop, seed, logprobs, a server's own such as llama.cpp's `top_k`),
 * with the model swapped for the upstream's id, `store` left out (it is Parley's), and, when
 * streamed, `stream_options.include_usage` on so the usage is metered whether the caller asked
 * for it or not (the usage chunk then goes to the caller only if they did).
 */
export function upstreamBody(target: V1Target, req: ChatRequest, stream: boolean): Record<string, unknown> {
  const { store: _store, ...rest } = req;
  const body: Record<string, unknown> = { ...rest, model: target.model, stream };
  if (stream) body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
  else delete body.stream_options;
  return body;
}

const headersOf = (target: V1Target): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {});

export async function openOpenAiChat(target: V1Target, req: ChatRequest, signal: AbortSignal): Promise<ChunkBatches> {
  const idle = new IdleLimit(target.idleTimeoutMs, signal);
  const res = await postUpstream(joinUrl(target.connection.baseUrl, '/chat/completions'), headersOf(target), upstreamBody(target, req, true), idle, signal);
  return readUpstream(res, idle, signal, (events) => {
    for (const e of events) if (e?.error) throw new AiError(`The AI provider failed while answering: ${String(e.error.message ?? e.error).slice(0, 500)}`);
    return events as ChatChunk[];
  });
}

/** A request not streamed: the upstream's `chat.completion` as it answered, for the caller. */
export async function completeOpenAiChat(target: V1Target, req: ChatRequest, signal: AbortSignal): Promise<Record<string, any>> {
  const idle = new IdleLimit(target.idleTimeoutMs, signal);
  const res = await postUpstream(joinUrl(target.connection.baseUrl, '/chat/completions'), headersOf(target), upstreamBody(target, req, false), idle, signal);
  try {
    return (await res.json()) as Record<string, any>;
  } catch (err) {
    throw idle.describe(err, signal);
  } finally {
    idle.stop();
  }
}
