import { AiError } from '../ai/ai.types';
import { IdleLimit } from '../ai/upstream';
import { answerLimitOf, imagesOf, textOf, type ChatChunk, type ChatRequest } from './chat-request';
import { ChunkMaker, joinUrl, postUpstream, readUpstream, type ChunkBatches, type V1Target } from './upstream-call';

/**
 * An `openai-responses` connection (OpenAI's Responses API) behind the door's Chat Completions:
 * the request said as a Responses request (not stored upstream, not in the background: the
 * caller's own request, streamed), its events said back as chunks.
 */
export function responsesRequest(target: V1Target, req: ChatRequest): Record<string, unknown> {
  const instructions = req.messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .filter(Boolean)
    .join('\n\n');
  const input: unknown[] = [];
  for (const m of req.messages) {
    if (m.role === 'system' || m.role === 'developer') continue;
    if (m.role === 'tool' || m.role === 'function') {
      input.push({ type: 'function_call_output', call_id: String(m.tool_call_id ?? ''), output: textOf(m.content) });
      continue;
    }
    const text = textOf(m.content);
    if (m.role === 'assistant') {
      if (text) input.push({ role: 'assistant', content: text });
      for (const c of m.tool_calls ?? []) input.push({ type: 'function_call', call_id: String(c.id ?? ''), name: String(c.function?.name ?? ''), arguments: c.function?.arguments ?? '{}' });
      continue;
    }
    const images = imagesOf(m.content).map((i) => ({ type: 'input_image', image_url: i.url, detail: i.detail ?? 'auto' }));
    input.push({ role: 'user', content: images.length ? [{ type: 'input_text', text }, ...images] : text });
  }
  const format = req.response_format;
  const text =
    format?.type === 'json_schema' && 'json_schema' in format
      ? { format: { type: 'json_schema', name: format.json_schema.name ?? 'answer', schema: format.json_schema.schema ?? {}, strict: format.json_schema.strict ?? false } }
      : format?.type === 'json_object'
        ? { format: { type: 'json_object' } }
        : undefined;
  const choice = req.tool_choice;
  const limit = answerLimitOf(req);
  return {
    model: target.model,
    ...(instructions ? { instructions } : {}),
    input,
    ...(req.tools?.length
      ? { tools: req.tools.map((t) => ({ type: 'function', name: t.function.name, description: t.function.description, parameters: t.function.parameters ?? { type: 'object', properties: {} }, strict: t.function.strict ?? false })) }
      : {}),
    ...(choice ? { tool_choice: typeof choice === 'string' ? choice : { type: 'function', name: choice.function.name } } : {}),
    ...(typeof req.parallel_tool_calls === 'boolean' ? { parallel_tool_calls: req.parallel_tool_calls } : {}),
    ...(text ? { text } : {}),
    ...(limit !== undefined ? { max_output_tokens: limit } : {}),
    ...(typeof req.temperature === 'number' ? { temperature: req.temperature } : {}),
    ...(typeof req.top_p === 'number' ? { top_p: req.top_p } : {}),
    store: false,
    stream: true,
  };
}

export async function openResponses(target: V1Target, req: ChatRequest, signal: AbortSignal): Promise<ChunkBatches> {
  const idle = new IdleLimit(target.idleTimeoutMs, signal);
  const res = await postUpstream(joinUrl(target.connection.baseUrl, '/responses'), target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}, responsesRequest(target, req), idle, signal);
  const make = new ChunkMaker(target.id);
  // Function calls by their output item id, numbered as OpenAI numbers tool calls.
  const calls = new Map<string, number>();
  return readUpstream(res, idle, signal, (events) => {
    const out: ChatChunk[] = [];
    const emit = (delta: ChatChunk['choices'][number]['delta'], finish: string | null = null) => void out.push(make.delta(delta, finish));
    for (const ev of events) {
      switch (ev?.type) {
        case 'response.created':
          if (ev.response?.id) make.id = `chatcmpl-${ev.response.id}`;
          break;
        case 'response.output_text.delta':
          if (ev.delta) emit({ content: ev.delta });
          break;
        case 'response.reasoning_text.delta':
        case 'response.reasoning_summary_text.delta':
          if (ev.delta) emit({ reasoning_content: ev.delta });
          break;
        case 'response.output_item.added':
          if (ev.item?.type === 'function_call') {
            const index = calls.size;
            calls.set(ev.item.id ?? ev.item.call_id, index);
            emit({ tool_calls: [{ index, id: ev.item.call_id, type: 'function', function: { name: ev.item.name, arguments: '' } }] });
          }
          break;
        case 'response.function_call_arguments.delta':
          if (ev.delta) emit({ tool_calls: [{ index: calls.get(ev.item_id) ?? 0, function: { arguments: ev.delta } }] });
          break;
        case 'response.completed':
        case 'response.incomplete': {
          const incomplete = ev.type === 'response.incomplete';
          emit({}, incomplete ? 'length' : calls.size ? 'tool_calls' : 'stop');
          const u = ev.response?.usage;
          if (u)
            out.push(
              make.usage({
                input: Number(u.input_tokens) || 0,
                output: Number(u.output_tokens) || 0,
                cached: Number(u.input_tokens_details?.cached_tokens) || 0,
                reasoning: Number(u.output_tokens_details?.reasoning_tokens) || 0,
              }),
            );
          break;
        }
        case 'response.failed':
          throw new AiError(`The AI provider failed while answering: ${String(ev.response?.error?.message ?? 'failed').slice(0, 500)}`);
        case 'error':
          throw new AiError(`The AI provider failed while answering: ${String(ev.message ?? 'error').slice(0, 500)}`);
      }
    }
    return out;
  });
}
