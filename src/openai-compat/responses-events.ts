import type { ChatChunk, WireUsage } from './chat-request';
import type { ResponsesRequest } from './responses-input';

/**
 * An answer's Chat Completions chunks as the Responses API streams it (docs/openai-api.md,
 * "Responses"): `response.created`, `response.in_progress`, then output items — reasoning
 * (`response.reasoning_text.*`), the message (`response.content_part.*`,
 * `response.output_text.*`), function calls (`response.function_call_arguments.*`) — each opened
 * with `response.output_item.added` and closed with `.done`, and one ending: `response.completed`,
 * `response.incomplete` (the length limit), `response.failed`, or, for a cancelled background
 * response, an `error` event with code `response_cancelled`. Every event has its
 * `sequence_number`, from 0; `response` is the response object kept up to date.
 */
export type ResponseEvent = { type: string; sequence_number: number; [key: string]: unknown };
export type ResponseObject = Record<string, any> & { id: string; status: string; output: Record<string, any>[] };

const hexId = () => crypto.randomUUID().replace(/-/g, '');
export const newResponseId = () => `resp_${hexId()}`;

/** The response object a request starts with (its echoed settings as OpenAI's API echoes them). */
export function responseObject(id: string, req: ResponsesRequest, model: string, createdAtMs: number): ResponseObject {
  const tools = (req.tools ?? []).map((t) => ({ parameters: null, strict: null, ...t }));
  return {
    id,
    object: 'response',
    created_at: Math.floor(createdAtMs / 1000),
    status: req.background ? 'queued' : 'in_progress',
    background: req.background === true,
    error: null,
    incomplete_details: null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    metadata: req.metadata ?? {},
    model,
    output: [],
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: req.previous_response_id ?? null,
    store: req.store === true,
    temperature: req.temperature ?? null,
    text: { format: req.text?.format ?? { type: 'text' } },
    tool_choice: req.tool_choice ?? 'auto',
    tools,
    top_p: req.top_p ?? null,
    truncation: 'disabled',
    usage: null,
  };
}

/** How a response ended, as its last event says. */
export type Ending = { status: 'completed' } | { status: 'failed' | 'cancelled'; message: string };

interface OpenItem {
  item: Record<string, any>;
  index: number;
  kind: 'message' | 'reasoning' | 'function_call';
  text: string;
}

export class ResponseEvents {
  private seq: number;
  private current: OpenItem | undefined;
  private readonly calls = new Map<number, OpenItem>();
  private finishReason: string | null = null;
  private usage: WireUsage | undefined;

  /** `nextSeq`: the sequence number the next event takes (0 for a new response). */
  constructor(
    readonly response: ResponseObject,
    nextSeq = 0,
  ) {
    this.seq = nextSeq;
  }

  private event(type: string, fields: Record<string, unknown>): ResponseEvent {
    return { type, ...fields, sequence_number: this.seq++ };
  }

  /** The object as it stands, for an event to carry (a copy: later changes must not reach an event already serialised). */
  private snapshot(): ResponseObject {
    return structuredClone(this.response);
  }

  /** `response.created` (queued for a background response, else in progress). */
  created(): ResponseEvent {
    return this.event('response.created', { response: this.snapshot() });
  }

  inProgress(): ResponseEvent {
    this.response.status = 'in_progress';
    return this.event('response.in_progress', { response: this.snapshot() });
  }

  /** The events a chunk makes. */
  add(chunk: ChatChunk, out: ResponseEvent[]): void {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const d = choice.delta ?? {};
    const reasoning = d.reasoning_content ?? (d as { reasoning?: unknown }).reasoning;
    if (typeof reasoning === 'string' && reasoning) {
      const item = this.open('reasoning', out);
      item.text += reasoning;
      out.push(this.event('response.reasoning_text.delta', { item_id: item.item.id, output_index: item.index, content_index: 0, delta: reasoning }));
    }
    if (typeof d.content === 'string' && d.content) {
      const item = this.open('message', out);
      item.text += d.content;
      out.push(this.event('response.output_text.delta', { item_id: item.item.id, output_index: item.index, content_index: 0, delta: d.content, logprobs: [] }));
    }
    for (const tc of d.tool_calls ?? []) {
      const index = tc.index ?? this.calls.size;
      let call = this.calls.get(index);
      if (!call) {
        this.close(out);
        call = this.addItem('function_call', { id: `fc_${hexId()}`, type: 'function_call', status: 'in_progress', arguments: '', call_id: tc.id || `call_${hexId()}`, name: tc.function?.name ?? '' }, out);
        this.calls.set(index, call);
      } else if (tc.function?.name) call.item.name += tc.function.name;
      const args = tc.function?.arguments;
      if (args) {
        call.text += args;
        // A call closed by the next one (calls streamed interleaved) still gets its arguments.
        if (call !== this.current) call.item.arguments = call.text;
        out.push(this.event('response.function_call_arguments.delta', { item_id: call.item.id, output_index: call.index, delta: args }));
      }
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  /** The open item of `kind`, opening it (and closing another) when needed. */
  private open(kind: 'message' | 'reasoning', out: ResponseEvent[]): OpenItem {
    if (this.current?.kind === kind) return this.current;
    this.close(out);
    const item =
      kind === 'message'
        ? this.addItem('message', { id: `msg_${hexId()}`, type: 'message', status: 'in_progress', role: 'assistant', content: [] }, out)
        : this.addItem('reasoning', { id: `rs_${hexId()}`, type: 'reasoning', summary: [], content: [] }, out);
    const part = kind === 'message' ? { type: 'output_text', text: '', annotations: [] } : { type: 'reasoning_text', text: '' };
    out.push(this.event('response.content_part.added', { item_id: item.item.id, output_index: item.index, content_index: 0, part }));
    this.current = item;
    return item;
  }

  private addItem(kind: OpenItem['kind'], item: Record<string, any>, out: ResponseEvent[]): OpenItem {
    const open: OpenItem = { item, index: this.response.output.length, kind, text: '' };
    this.response.output.push(item);
    out.push(this.event('response.output_item.added', { output_index: open.index, item: structuredClone(item) }));
    if (kind === 'function_call') this.current = open;
    return open;
  }

  /** Close the open item: its text's `.done`, its part's, then the item's. */
  private close(out: ResponseEvent[]): void {
    const c = this.current;
    if (!c) return;
    this.current = undefined;
    const at = { item_id: c.item.id, output_index: c.index };
    if (c.kind === 'message') {
      const part = { type: 'output_text', text: c.text, annotations: [] };
      out.push(this.event('response.output_text.done', { ...at, content_index: 0, text: c.text, logprobs: [] }));
      out.push(this.event('response.content_part.done', { ...at, content_index: 0, part }));
      Object.assign(c.item, { status: 'completed', content: [part] });
    } else if (c.kind === 'reasoning') {
      const part = { type: 'reasoning_text', text: c.text };
      out.push(this.event('response.reasoning_text.done', { ...at, content_index: 0, text: c.text }));
      out.push(this.event('response.content_part.done', { ...at, content_index: 0, part }));
      c.item.content = [part];
    } else {
      out.push(this.event('response.function_call_arguments.done', { ...at, name: c.item.name, arguments: c.text }));
      Object.assign(c.item, { status: 'completed', arguments: c.text });
    }
    out.push(this.event('response.output_item.done', { output_index: c.index, item: structuredClone(c.item) }));
  }

  /** The last events: the open item closed, then the response's ending with its final object. */
  finish(ending: Ending, out: ResponseEvent[]): void {
    this.close(out);
    const r = this.response;
    if (this.usage) r.usage = usageOf(this.usage);
    if (ending.status !== 'completed') {
      // An item cut short says so.
      for (const item of r.output) if (item.status === 'in_progress') item.status = 'incomplete';
      r.status = ending.status;
      if (ending.status === 'failed') {
        r.error = { code: 'server_error', message: ending.message };
        out.push(this.event('response.failed', { response: this.snapshot() }));
      } else out.push(this.event('error', { code: 'response_cancelled', message: ending.message, param: null }));
      return;
    }
    if (this.finishReason === 'length') {
      r.status = 'incomplete';
      r.incomplete_details = { reason: 'max_output_tokens' };
      out.push(this.event('response.incomplete', { response: this.snapshot() }));
      return;
    }
    r.status = 'completed';
    out.push(this.event('response.completed', { response: this.snapshot() }));
  }
}

/** Chat Completions usage as the Responses API reports it. */
export function usageOf(u: WireUsage): Record<string, unknown> {
  return {
    input_tokens: u.prompt_tokens ?? 0,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: u.completion_tokens ?? 0,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: u.total_tokens ?? (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0),
  };
}

/** The text of a response's messages, what OpenAI's SDKs call `output_text`. */
export const outputTextOf = (r: ResponseObject) =>
  r.output
    .filter((i) => i.type === 'message')
    .flatMap((i) => i.content ?? [])
    .map((p: Record<string, any>) => (p.type === 'output_text' ? p.text : ''))
    .join('');
