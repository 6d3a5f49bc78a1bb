import type { ChatChunk, ToolCallWire, WireUsage } from './chat-request';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * An answer put together from its chunks as they pass: its text, reasoning, tool calls (their
 * pieces joined by `index`), how it ended and the usage the upstream reported. What a request not
 * streamed is answered with (`completion`), what `store: true` keeps and what metering settles.
 */
export class AnswerCollector {
  id = '';
  created = 0;
  text = '';
  reasoning = '';
  finishReason: string | null = null;
  usage: WireUsage | undefined;
  readonly toolCalls: ToolCall[] = [];
  private readonly byIndex = new Map<number, ToolCall>();

  add(chunk: ChatChunk): void {
    if (!this.id) {
      this.id = chunk.id;
      this.created = chunk.created;
    }
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const d = choice.delta ?? {};
    if (typeof d.content === 'string') this.text += d.content;
    const reasoning = d.reasoning_content ?? (d as { reasoning?: unknown }).reasoning;
    if (typeof reasoning === 'string') this.reasoning += reasoning;
    for (const tc of d.tool_calls ?? []) this.addCall(tc);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  private addCall(tc: ToolCallWire): void {
    const index = tc.index ?? this.toolCalls.length;
    let call = this.byIndex.get(index);
    if (!call) {
      call = { id: tc.id ?? '', type: 'function', function: { name: '', arguments: '' } };
      this.byIndex.set(index, call);
      this.toolCalls.push(call);
    }
    if (tc.id) call.id = tc.id;
    if (tc.function?.name) call.function.name += tc.function.name;
    if (tc.function?.arguments) call.function.arguments += tc.function.arguments;
  }

  /** The answer as a `chat.completion` (a request not streamed, from a connection that is not passed through). */
  completion(model: string): Record<string, unknown> {
    return {
      id: this.id || `chatcmpl-${crypto.randomUUID()}`,
      object: 'chat.completion',
      created: this.created || Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: this.text || (this.toolCalls.length ? null : ''),
            ...(this.reasoning ? { reasoning_content: this.reasoning } : {}),
            ...(this.toolCalls.length ? { tool_calls: this.toolCalls } : {}),
            refusal: null,
          },
          finish_reason: this.finishReason ?? (this.toolCalls.length ? 'tool_calls' : 'stop'),
          logprobs: null,
        },
      ],
      ...(this.usage ? { usage: this.usage } : {}),
    };
  }

  /** Read a `chat.completion` an upstream answered whole (what a passed-through request gets). */
  static of(completion: Record<string, any>): AnswerCollector {
    const c = new AnswerCollector();
    const m = completion.choices?.[0]?.message ?? {};
    c.id = String(completion.id ?? '');
    c.text = typeof m.content === 'string' ? m.content : '';
    c.reasoning = String(m.reasoning_content ?? m.reasoning ?? '');
    for (const tc of m.tool_calls ?? []) c.addCall({ id: tc.id, function: tc.function });
    c.finishReason = completion.choices?.[0]?.finish_reason ?? null;
    c.usage = completion.usage ?? undefined;
    return c;
  }
}
