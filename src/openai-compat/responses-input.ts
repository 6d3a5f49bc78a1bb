import { openAiInvalid } from '../http/errors';
import { checkImageUrl, type ImageUrlPolicy } from '../net/image-url';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool } from './chat-request';

/**
 * A Responses API request (`POST /v1/responses`) said as the Chat Completions request the door
 * sends every connection (docs/openai-api.md, "Responses"): `instructions` a system message,
 * `input` messages and function calls and their outputs, function `tools`, `tool_choice`,
 * `text.format`, `max_output_tokens` and the sampling parameters. OpenAI's built-in tools (web
 * search, file search, code interpreter…) and file inputs are refused with a sentence: Parley
 * passes the caller's function tools only.
 */
export interface ResponsesRequest {
  model: string;
  input?: string | Record<string, any>[];
  instructions?: string | null;
  tools?: Record<string, any>[];
  tool_choice?: unknown;
  text?: { format?: Record<string, any> } | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  parallel_tool_calls?: boolean | null;
  stream?: boolean | null;
  background?: boolean | null;
  store?: boolean | null;
  previous_response_id?: string | null;
  metadata?: Record<string, string> | null;
  [key: string]: unknown;
}

const partText = (p: Record<string, any>) => (p?.type === 'input_text' || p?.type === 'output_text' || p?.type === 'text' ? String(p.text ?? '') : undefined);

function contentOf(content: unknown, where: string, images: ImageUrlPolicy): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw openAiInvalid(`${where} must be a string or an array of content parts.`, where);
  return content.map((p, j): ContentPart => {
    const text = partText(p);
    if (text !== undefined) return { type: 'text', text };
    if (p?.type === 'input_image') {
      if (typeof p.image_url !== 'string') throw openAiInvalid(`${where}[${j}]: Parley takes images by image_url (a data:image/... or https: URL), not by file_id.`, `${where}[${j}].image_url`);
      const checked = checkImageUrl(p.image_url, images);
      if (!checked.ok) throw openAiInvalid(`The image URL ${where}[${j}].image_url ${checked.reason}.`, `${where}[${j}].image_url`, 'invalid_image_url');
      return { type: 'image_url', image_url: { url: checked.url, ...(p.detail ? { detail: p.detail } : {}) } };
    }
    throw openAiInvalid(`${where}[${j}]: content of type "${p?.type}" is not supported here (input_text and input_image are).`, `${where}[${j}].type`, 'unsupported_value');
  });
}

/** The request's `input` as chat messages (consecutive function calls become one assistant turn, as Chat Completions has them). */
export function inputMessages(input: ResponsesRequest['input'], images: ImageUrlPolicy): ChatMessage[] {
  if (input == null) return [];
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw openAiInvalid('input must be a string or an array of input items.', 'input');
  const out: ChatMessage[] = [];
  input.forEach((item, i) => {
    const where = `input[${i}]`;
    const type = item?.type ?? 'message';
    if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(item.role)) throw openAiInvalid(`${where}.role must be user, assistant, system or developer.`, `${where}.role`);
      out.push({ role: item.role, content: contentOf(item.content, `${where}.content`, images) });
    } else if (type === 'function_call') {
      const call = { id: String(item.call_id ?? ''), type: 'function' as const, function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '{}') } };
      const last = out.at(-1);
      if (last?.role === 'assistant' && last.tool_calls && !last.content) last.tool_calls.push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      const output = typeof item.output === 'string' ? item.output : Array.isArray(item.output) ? item.output.map((p: Record<string, any>) => partText(p) ?? '').join('') : '';
      out.push({ role: 'tool', tool_call_id: String(item.call_id ?? ''), content: output });
    } else if (type !== 'reasoning') {
      throw openAiInvalid(`${where}: input items of type "${type}" are not supported here (messages, function_call and function_call_output are).`, `${where}.type`, 'unsupported_value');
    }
  });
  return out;
}

function toolsOf(tools: ResponsesRequest['tools']): FunctionTool[] | undefined {
  if (tools == null) return undefined;
  if (!Array.isArray(tools)) throw openAiInvalid('tools must be an array.', 'tools');
  return tools.map((t, i) => {
    if (t?.type !== 'function')
      throw openAiInvalid(`tools[${i}]: the built-in tool "${t?.type}" is not available on this server; Parley passes your function tools to the model, and your app runs them.`, `tools[${i}].type`, 'unsupported_value');
    if (typeof t.name !== 'string' || !t.name) throw openAiInvalid(`tools[${i}].name is required.`, `tools[${i}].name`);
    return { type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters ?? { type: 'object', properties: {} }, ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}) } };
  });
}

function toolChoiceOf(choice: unknown): ChatRequest['tool_choice'] {
  if (choice == null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  const c = choice as Record<string, any>;
  if (c?.type === 'function' && typeof c.name === 'string') return { type: 'function', function: { name: c.name } };
  throw openAiInvalid('tool_choice must be "auto", "none", "required" or {type: "function", name}.', 'tool_choice', 'unsupported_value');
}

function formatOf(text: ResponsesRequest['text']): ChatRequest['response_format'] {
  const f = text?.format;
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema') return { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, strict: f.strict, ...(f.description ? { description: f.description } : {}) } };
  throw openAiInvalid(`text.format of type "${f.type}" is not supported (text, json_object and json_schema are).`, 'text.format', 'unsupported_value');
}

/** The Chat Completions request for a Responses request; `history`: the conversation a `previous_response_id` continues. */
export function chatRequestOf(req: ResponsesRequest, history: ChatMessage[], images: ImageUrlPolicy): ChatRequest {
  const messages: ChatMessage[] = [...(req.instructions ? [{ role: 'system' as const, content: req.instructions }] : []), ...history, ...inputMessages(req.input, images)];
  if (!messages.some((m) => m.role !== 'system' && m.role !== 'developer')) throw openAiInvalid('input is required: a string, or an array of input items.', 'input');
  const tools = toolsOf(req.tools);
  const format = formatOf(req.text);
  const choice = toolChoiceOf(req.tool_choice);
  return {
    model: req.model,
    messages,
    ...(tools?.length ? { tools } : {}),
    ...(choice ? { tool_choice: choice } : {}),
    ...(format ? { response_format: format } : {}),
    ...(typeof req.max_output_tokens === 'number' ? { max_tokens: req.max_output_tokens } : {}),
    ...(typeof req.temperature === 'number' ? { temperature: req.temperature } : {}),
    ...(typeof req.top_p === 'number' ? { top_p: req.top_p } : {}),
    ...(typeof req.parallel_tool_calls === 'boolean' ? { parallel_tool_calls: req.parallel_tool_calls } : {}),
  };
}

/** The request checked before anything else: a JSON object with a model. */
export function checkResponsesRequest(body: unknown): ResponsesRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw openAiInvalid('The request body must be a JSON object.');
  const req = body as ResponsesRequest;
  if (typeof req.model !== 'string' || !req.model) throw openAiInvalid('You must provide a model parameter (GET /v1/models lists them).', 'model');
  return req;
}
