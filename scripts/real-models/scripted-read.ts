/**
 * The `read_file` call a model would make, scripted between Parley and llama-server: the tiny
 * test model cannot call tools (its README), so a user message holding READ_MARKER gets this call
 * in the model's place; Parley runs read_file for real, and the next round, carrying the
 * document's text, goes to the real model through the real chat template
 * (real-models-files.test.ts, real-models-web.test.ts).
 */
export const READ_MARKER = 'Read the attached document.';

/** The newest user message asks for the scripted call and no tool result follows it yet: the file id it names. */
export function wantsScriptedRead(body: any): string | undefined {
  const last = body.messages?.at(-1);
  if (last?.role !== 'user' || typeof last.content !== 'string' || !last.content.includes(READ_MARKER)) return undefined;
  if (!(body.tools ?? []).some((t: any) => t.function?.name === 'read_file')) return undefined;
  return /\(file id ([^,)]+)/.exec(last.content)?.[1];
}

export function scriptedRead(model: string, fileId: string): Response {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const call = { index: 0, id: 'scriptedRead1', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ fileId }) } };
  return new Response(chunk({ role: 'assistant', content: null, tool_calls: [call] }) + chunk({}, 'tool_calls') + 'data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });
}
