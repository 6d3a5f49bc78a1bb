/**
 * Between Parley and llama-server for the one thing a tiny model cannot do: call a tool. A chat
 * request whose newest user text holds `TOOL_MARKER` and that offers `search_history` gets a
 * scripted streamed call of that tool instead of the model's answer; every other request —
 * including the next round, which carries the call and its result through the real chat
 * template — goes to llama-server unchanged. So the tool round's request shape is tested against
 * the real server even though the model never asks for it.
 */
import { forward, startLoopbackProxy, type LoopbackProxy } from './loopback-proxy';
import { TOOL_OUTPUT_LABEL } from '../../src/ai/shape-chat-messages';

export const TOOL_MARKER = 'Search my history.';

export interface ToolCallProxy extends LoopbackProxy {
  /** Tool calls scripted so far. */
  scripted: number;
  /**
   * Requests llama-server refused, as `HTTP <status>: <message>`: Parley hides some refusals on
   * purpose (a failed research plan falls back to searching the question), and the matrix must
   * still see them.
   */
  refused: string[];
}

export function startToolCallProxy(upstream: string): ToolCallProxy {
  const counts = { scripted: 0, refused: [] as string[] };
  const server = startLoopbackProxy(async (req) => {
    const body = req.method === 'POST' ? await req.text() : undefined;
    if (new URL(req.url).pathname === '/v1/chat/completions' && body) {
      const parsed = JSON.parse(body);
      if (wantsScriptedCall(parsed)) {
        counts.scripted++;
        return scriptedCall(parsed.model);
      }
    }
    const res = await forward(upstream, req, body);
    // Only refusals of the API itself count. Parley's GET probes for other servers' endpoints
    // (Ollama's /api/version) are meant to miss, and the context budget's counts (/apply-template,
    // /tokenize) fall back to an estimate when a template refuses the shape: the request itself
    // then meets the same refusal, which is recorded.
    if (res.ok || req.method !== 'POST' || !new URL(req.url).pathname.startsWith('/v1/')) return res;
    const text = await res.text();
    counts.refused.push(`HTTP ${res.status}: ${text}`);
    return new Response(text, { status: res.status, headers: res.headers });
  });
  return Object.assign(counts, server);
}

function wantsScriptedCall(body: any): boolean {
  const messages: any[] = body.messages ?? [];
  const last = messages.at(-1);
  const text = typeof last?.content === 'string' ? last.content : '';
  // A tool's output sent as a user turn (templates without a tool role) may quote an earlier
  // question holding the marker: it is the next round, for the real template, not a new call.
  if (text.startsWith(`[${TOOL_OUTPUT_LABEL}`)) return false;
  return last?.role === 'user' && text.includes(TOOL_MARKER) && (body.tools ?? []).some((t: any) => t.function?.name === 'search_history');
}

function scriptedCall(model: string): Response {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const call = { index: 0, id: 'scripted-call-1', type: 'function', function: { name: 'search_history', arguments: '{"query":"picnic"}' } };
  const sse = chunk({ role: 'assistant', content: null, tool_calls: [call] }) + chunk({}, 'tool_calls') + 'data: [DONE]\n\n';
  return new Response(sse, { headers: { 'content-type': 'text/event-stream' } });
}
