/**
 * What the fake chat server answers when it plays llama-server (`props` set), for the context
 * budget: `POST /apply-template` renders a request through a ChatML template (Qwen 2.5's shape:
 * the tools listed in the system turn, a tool's output in a user turn), `POST /tokenize` counts a
 * token per three bytes, and a chat request longer than the window (`n_ctx` in /props) is refused
 * with llama-server's error.
 */

interface WireMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { function: { name: string; arguments: string } }[];
}

export function renderChatML(body: { messages?: WireMessage[]; tools?: unknown[] }): string {
  const messages = body.messages ?? [];
  const system = messages[0]?.role === 'system' ? String(messages[0].content ?? '') : 'You are a helpful assistant.';
  let out = `<|im_start|>system\n${system}`;
  if (body.tools?.length) out += `\n\n# Tools\n\n<tools>\n${body.tools.map((t) => JSON.stringify(t)).join('\n')}\n</tools>`;
  out += '<|im_end|>\n';
  for (const m of messages[0]?.role === 'system' ? messages.slice(1) : messages) {
    const text = typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => (p.type === 'text' ? (p.text ?? '') : '<__media__>')).join('');
    const calls = (m.tool_calls ?? []).map((c) => `\n<tool_call>\n${JSON.stringify({ name: c.function.name, arguments: c.function.arguments })}\n</tool_call>`).join('');
    out += m.role === 'tool' ? `<|im_start|>user\n<tool_response>\n${text}\n</tool_response><|im_end|>\n` : `<|im_start|>${m.role}\n${text}${calls}<|im_end|>\n`;
  }
  return `${out}<|im_start|>assistant\n`;
}

export const tokensOf = (text: string): number => Math.ceil(Buffer.byteLength(text) / 3);

/** A request's tokens as the fake llama-server counts them. */
export const promptTokens = (body: { messages?: WireMessage[]; tools?: unknown[] }): number => tokensOf(renderChatML(body));

/** llama-server's refusal of a prompt longer than its window; undefined when it fits. */
export function contextRefusal(body: { messages?: WireMessage[]; tools?: unknown[] }, props: unknown): Response | undefined {
  const nCtx = (props as { default_generation_settings?: { n_ctx?: number } } | undefined)?.default_generation_settings?.n_ctx;
  const n = promptTokens(body);
  if (!nCtx || n < nCtx) return undefined;
  return Response.json(
    { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: n, n_ctx: nCtx } },
    { status: 400 },
  );
}
