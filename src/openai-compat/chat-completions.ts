import { AiError } from '../ai/ai.types';
import { OpenAiError } from '../http/errors';
import { imageUrlPolicy } from '../net/image-url';
import { checkChatRequest, type ChatRequest } from './chat-request';
import { AnswerCollector } from './collect-answer';
import { keepAsConversation } from './keep-conversation';
import { completeOpenAiChat } from './upstream-openai-chat';
import type { ChunkBatches, V1Target } from './upstream-call';
import { openStream, type ResolveTarget } from './v1-target';
import { withAssistant } from './v1-assistants';
import { beginCall, chatEstimate, chatReport, estimateInput, type Meter } from './v1-usage';
import { sseResponse, type V1Context } from './v1-route';
import { dataFrame, textStream } from './text-stream';

/**
 * `POST /v1/chat/completions` (docs/openai-api.md): one answer of the caller's model, streamed
 * (`data:` chunks, then `data: [DONE]`) or whole, in OpenAI's shapes. Nothing is kept unless the
 * request says `store: true`. A caller that leaves mid-stream stops the upstream request.
 */
export function chatCompletions(resolve: ResolveTarget) {
  return async (ctx: V1Context): Promise<Response | object> => {
    const { deps } = ctx;
    const asked = checkChatRequest(ctx.body, imageUrlPolicy(deps.config));
    const target = await resolve(asked.model, ctx.user);
    const req = withAssistant(asked, target.assistant);
    const inputTokens = estimateInput(req);
    const streamed = req.stream === true;
    const { meter, releaseSlot } = await beginCall(ctx, target, streamed, chatEstimate(target, req, inputTokens));
    const stop = new AbortController();
    const signal = AbortSignal.any([ctx.request.signal, deps.lifecycle.signal, stop.signal]);
    const done = async (answer: AnswerCollector) => {
      await meter.settle(chatReport(target, answer, inputTokens));
      if (req.store === true) await deps.store.write((tx) => keepAsConversation(tx, { userId: ctx.user.id, messages: req.messages, answer, model: target.id, assistantId: target.assistant?.id }, deps.now()));
    };
    if (!streamed) return answerWhole(target, req, signal, meter, done);
    let batches: ChunkBatches;
    try {
      batches = await openStream(target, req, signal);
    } catch (err) {
      releaseSlot();
      await meter.release();
      throw err;
    }
    const frames = chatFrames(batches, target.id, req.stream_options?.include_usage === true, signal, done, releaseSlot);
    return sseResponse(textStream(frames, () => stop.abort(), deps.config.sseHeartbeatSeconds * 1000));
  };
}

/** A request not streamed: an `openai-chat` connection's answer as it gave it, any other's put together from its stream. */
async function answerWhole(target: V1Target, req: ChatRequest, signal: AbortSignal, meter: Meter, done: (a: AnswerCollector) => Promise<void>): Promise<object> {
  let answer = new AnswerCollector();
  try {
    if (target.connection.api === 'openai-chat') {
      const body = await completeOpenAiChat(target, req, signal);
      answer = AnswerCollector.of(body);
      await done(answer);
      return { ...body, model: target.id };
    }
    for await (const batch of await openStream(target, req, signal)) for (const chunk of batch) answer.add(chunk);
  } catch (err) {
    // Refused or unreachable: the provider did no work. Failed while answering: it did some.
    if (err instanceof OpenAiError) await meter.release();
    else await meter.settle(chatReport(target, answer, estimateInput(req)));
    throw err;
  }
  await done(answer);
  return answer.completion(target.id);
}

/**
 * The chunks as OpenAI streams them, each network read's in one write, the model named as the
 * caller named it. The usage chunk goes out only when the caller asked for it
 * (`stream_options.include_usage`). A failure mid-answer is an `error` event (what OpenAI's SDKs
 * raise), and the stream ends without `[DONE]`.
 */
async function* chatFrames(
  batches: ChunkBatches,
  model: string,
  includeUsage: boolean,
  signal: AbortSignal,
  done: (a: AnswerCollector) => Promise<void>,
  releaseSlot: () => void,
): AsyncGenerator<string> {
  const answer = new AnswerCollector();
  try {
    for await (const batch of batches) {
      let out = '';
      for (const chunk of batch) {
        answer.add(chunk);
        if (!includeUsage && !chunk.choices?.length && chunk.usage) continue;
        chunk.model = model;
        out += dataFrame(JSON.stringify(chunk));
      }
      if (out) yield out;
    }
    yield 'data: [DONE]\n\n';
  } catch (err) {
    if (!signal.aborted) {
      const message = err instanceof AiError ? err.message : 'The AI provider failed while answering.';
      yield dataFrame(JSON.stringify({ error: { message, type: 'server_error', code: null, param: null } }));
    }
  } finally {
    releaseSlot();
    await done(answer);
  }
}
