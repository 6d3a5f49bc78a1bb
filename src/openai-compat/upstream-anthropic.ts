import { AiError } from '../ai/ai.types';
import { IdleLimit } from '../ai/upstream';
import { imageBlock, type Block } from '../ai/anthropic-blocks';
import { answerLimitOf, imagesOf, textOf, type ChatChunk, type ChatMessage, type ChatRequest } from './chat-request';
import { ChunkMaker, joinUrl, postUpstream, readUpstream, type ChunkBatches, type V1Target } from './upstream-call';

/**
 * An `anthropic` connection behind the door: a Chat Completions request said as a Messages
 * request, and Anthropic's stream said back as Chat Completions chunks (docs/openai-api.md,
 * "Connections that are not OpenAI-compatible"). Tools, tool choices, tool results, images,
 * stop sequences, temperature and top_p carry over; `response_format` becomes an instruction
 * (the Messages API has no JSON mode); the usage is Anthropic's own report.
 */

const DEFAULT_ANSWER_TOKENS = 4096;
const VERSION = '2023-06-01';

type Turn = { role: 'user' | 'assistant'; content: Block[] };

const parseArguments = (text: string | undefined): Record<string, unknown> => {
  try {
    const v = JSON.parse(text || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
};

/** A JSON answer asked for, as the instruction the model gets instead. */
function formatInstruction(format: ChatRequest['response_format']): string | undefined {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_schema' && 'json_schema' in format)
    return `Answer with one JSON value only, no other text, that matches this JSON Schema:\n${JSON.stringify(format.json_schema.schema ?? {})}`;
  return 'Answer with one JSON object only, no other text.';
}

export function messagesRequest(target: V1Target, req: ChatRequest): Record<string, unknown> {
  const system = [...req.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)), formatInstruction(req.response_format) ?? '']
    .filter(Boolean)
    .join('\n\n');
  const turns: Turn[] = [];
  const push = (role: Turn['role'], content: Block[]) => {
    if (!content.length) return;
    const last = turns.at(-1);
    // The API wants the roles to alternate: consecutive turns of a role are one turn.
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };
  for (const m of req.messages) push(...turnOf(m));
  const tools = (req.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters ?? { type: 'object', properties: {} } }));
  const choice = toolChoiceOf(req.tool_choice, req.parallel_tool_calls);
  const stop = req.stop == null ? undefined : Array.isArray(req.stop) ? req.stop : [req.stop];
  return {
    model: target.model,
    max_tokens: answerLimitOf(req) ?? target.answerTokens ?? DEFAULT_ANSWER_TOKENS,
    ...(system ? { system } : {}),
    messages: turns,
    ...(tools.length ? { tools } : {}),
    ...(tools.length && choice ? { tool_choice: choice } : {}),
    ...(stop?.length ? { stop_sequences: stop } : {}),
    // OpenAI's temperature runs to 2, Anthropic's to 1.
    ...(typeof req.temperature === 'number' ? { temperature: Math.min(1, Math.max(0, req.temperature)) } : {}),
    ...(typeof req.top_p === 'number' ? { top_p: req.top_p } : {}),
    stream: true,
  };
}

function turnOf(m: ChatMessage): [Turn['role'], Block[]] {
  switch (m.role) {
    case 'system':
    case 'developer':
      return ['user', []];
    case 'tool':
    case 'function':
      return ['user', [{ type: 'tool_result', tool_use_id: String(m.tool_call_id ?? m.name ?? ''), content: textOf(m.content) || '(no output)' }]];
    case 'assistant': {
      const text = textOf(m.content);
      const calls = (m.tool_calls ?? []).map((c) => ({ type: 'tool_use', id: String(c.id ?? ''), name: String(c.function?.name ?? ''), input: parseArguments(c.function?.arguments) }));
      return ['assistant', [...(text.trim() ? [{ type: 'text', text }] : []), ...calls]];
    }
    default: {
      const text = textOf(m.content);
      return ['user', [...imagesOf(m.content).map((i) => imageBlock(i.url)), ...(text.trim() ? [{ type: 'text', text }] : [])]];
    }
  }
}

function toolChoiceOf(choice: ChatRequest['tool_choice'], parallel: boolean | undefined): Record<string, unknown> | undefined {
  const single = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...single };
  if (choice && typeof choice === 'object') return { type: 'tool', name: choice.function.name, ...single };
  return parallel === false ? { type: 'auto', ...single } : undefined;
}

const FINISH: Record<string, string> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls', refusal: 'content_filter', pause_turn: 'stop' };

export async function openAnthropic(target: V1Target, req: ChatRequest, signal: AbortSignal): Promise<ChunkBatches> {
  const idle = new IdleLimit(target.idleTimeoutMs, signal);
  const key = target.apiKey || 'none';
  const headers = { 'x-api-key': key, authorization: `Bearer ${key}`, 'anthropic-version': VERSION };
  const res = await postUpstream(joinUrl(target.connection.baseUrl, '/v1/messages'), headers, messagesRequest(target, req), idle, signal);
  const make = new ChunkMaker(target.id);
  const usage = { input: 0, output: 0, cached: 0 };
  // Tool-use blocks by their index in the message, numbered as OpenAI numbers tool calls.
  const toolIndex = new Map<number, number>();
  return readUpstream(res, idle, signal, (events) => {
    const out: ChatChunk[] = [];
    const emit = (delta: ChatChunk['choices'][number]['delta'], finish: string | null = null) => void out.push(make.delta(delta, finish));
    for (const ev of events) {
      switch (ev?.type) {
        case 'message_start': {
          if (ev.message?.id) make.id = `chatcmpl-${ev.message.id}`;
          const u = ev.message?.usage ?? {};
          // OpenAI's prompt tokens count the cached ones; Anthropic's input tokens count neither cache.
          usage.cached = Number(u.cache_read_input_tokens) || 0;
          usage.input = (Number(u.input_tokens) || 0) + usage.cached + (Number(u.cache_creation_input_tokens) || 0);
          usage.output = Number(u.output_tokens) || 0;
          break;
        }
        case 'content_block_start':
          if (ev.content_block?.type === 'tool_use') {
            const index = toolIndex.size;
            toolIndex.set(ev.index, index);
            emit({ tool_calls: [{ index, id: ev.content_block.id, type: 'function', function: { name: ev.content_block.name, arguments: '' } }] });
          }
          break;
        case 'content_block_delta': {
          const d = ev.delta ?? {};
          if (d.type === 'text_delta' && d.text) emit({ content: d.text });
          else if (d.type === 'thinking_delta' && d.thinking) emit({ reasoning_content: d.thinking });
          else if (d.type === 'input_json_delta' && d.partial_json) emit({ tool_calls: [{ index: toolIndex.get(ev.index) ?? 0, function: { arguments: d.partial_json } }] });
          break;
        }
        case 'message_delta':
          if (typeof ev.usage?.output_tokens === 'number') usage.output = ev.usage.output_tokens;
          if (ev.delta?.stop_reason) emit({}, FINISH[ev.delta.stop_reason] ?? 'stop');
          break;
        case 'message_stop':
          out.push(make.usage(usage));
          break;
        case 'error':
          throw new AiError(ev.error?.type === 'overloaded_error' ? 'The AI provider is overloaded; try again later.' : `The AI provider failed while answering: ${String(ev.error?.message ?? 'error').slice(0, 500)}`);
      }
    }
    return out;
  });
}
