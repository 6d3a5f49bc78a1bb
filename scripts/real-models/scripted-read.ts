/**
 * The `read_file` call a model would make, scripted between Parley and llama-server: the tiny
 * test model cannot call tools (its README), so a user message holding READ_MARKER gets this call
 * in the model's place; Parley runs read_file for real, and the next round, carrying the
 * document's text, goes to the real model through the real chat template
 * (real-models-files.test.ts, real-models-web.test.ts).
 */
import { forward, startLoopbackProxy, type LoopbackProxy } from './loopback-proxy';

export const READ_MARKER = 'Read the attached document.';

/** The newest user message asks for the scripted call and no tool result follows it yet: the file id it names. */
export function wantsScriptedRead(body: any): string | undefined {
  const last = body.messages?.at(-1);
  if (last?.role !== 'user' || typeof last.content !== 'string' || !last.content.includes(READ_MARKER)) return undefined;
  if (!(body.tools ?? []).some((t: any) => t.function?.name === 'read_file')) return undefined;
  return /\(file id ([^,)]+)/.exec(last.content)?.[1];
}

export function scriptedRead(model: string, fileId: string): Response {
  return scriptedToolCall(model, { id: 'scriptedRead1', name: 'read_file', args: { fileId } });
}

/** One streamed tool call in the Chat Completions wire format, as llama-server would send it. */
export function scriptedToolCall(model: string, c: { id: string; name: string; args: unknown }): Response {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const call = { index: 0, id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } };
  return new Response(chunk({ role: 'assistant', content: null, tool_calls: [call] }) + chunk({}, 'tool_calls') + 'data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });
}

/** A chat request Parley sent upstream, with what answered it. */
export interface UpstreamCall {
  body: any;
  scripted: boolean;
  status?: number;
}

/**
 * Between Parley and llama-server: a chat request `script` answers (a scripted tool call) gets
 * that answer; every other goes to llama-server, stopped at its first comma or full stop. The
 * tiny model never ends an answer by itself: it would run to the rig's 64 tokens (a few letters
 * each) and the turn end with the cut-off error; stopping it lets the turn end as a real model's
 * does, with `done`, the messages and tools going on as Parley sent them. Each chat request is
 * recorded in `upstream`.
 */
export function startScriptingProxy(llamaUrl: () => string, script: (body: any) => Response | undefined, upstream: UpstreamCall[]): LoopbackProxy {
  return startLoopbackProxy(async (req) => {
    const body = req.method === 'POST' ? await req.text() : undefined;
    if (new URL(req.url).pathname === '/v1/chat/completions' && body) {
      const parsed = JSON.parse(body);
      const scripted = script(parsed);
      upstream.push({ body: parsed, scripted: Boolean(scripted) });
      if (scripted) return scripted;
      const res = await forward(llamaUrl(), req, JSON.stringify({ ...parsed, stop: ['.', ',', '!', '?', '\n'] }));
      upstream.at(-1)!.status = res.status;
      return res;
    }
    return forward(llamaUrl(), req, body);
  });
}
