import type { AiImage, AiMessage } from './ai.types';

/**
 * A turn of a Chat Completions conversation as Parley holds it: its own messages, plus the tool
 * rounds of the turn being answered (the model's calls and what the tools returned).
 */
export type ChatTurn =
  | AiMessage
  | { role: 'assistant'; content: string; toolCalls: { id: string; name: string; arguments: string }[] }
  | { role: 'tool'; callId: string; name: string; content: string };

/**
 * The `messages` of a Chat Completions request, in the form real chat templates accept. Servers
 * such as llama.cpp's render the messages through the model's own Jinja template, and many of
 * those refuse what OpenAI takes: a second system message ("System message must be at the
 * beginning"), two user turns in a row ("roles must alternate"), a conversation opening with the
 * assistant, an empty turn, or tool-call ids not in Mistral's nine-character form. So:
 *
 * - one leading system message: every system text Parley has, in order, joined;
 * - consecutive user turns merged into one (a group's members already name themselves in their
 *   lines), likewise consecutive plain assistant turns;
 * - empty turns dropped, and assistant turns before the first user turn (a group history cut
 *   after the question they answered);
 * - tool calls as `tool_calls` on an assistant turn followed by one `tool` message per call,
 *   named, with ids rewritten to nine letters and digits, the same in both places;
 * - or, with `toolRole: false`, for templates that have no `tool` role and demand strict
 *   user/assistant alternation (Gemma 2: "Conversation roles must alternate"): each call as
 *   assistant text the model can read, each result as a user turn marked as a tool's output (not
 *   the user's words), merged with their neighbours like any other turn so roles still alternate.
 */
export function shapeChatMessages(turns: readonly ChatTurn[], opts: { toolRole?: boolean } = {}): unknown[] {
  const system = turns
    .filter((t) => t.role === 'system')
    .map((t) => t.content.trim())
    .filter(Boolean)
    .join('\n\n');
  const out: unknown[] = system ? [{ role: 'system', content: system }] : [];
  const ids = new Map<string, string>();
  const wireId = (id: string) => {
    let w = ids.get(id);
    if (!w) ids.set(id, (w = `call${String(ids.size + 1).padStart(5, '0')}`));
    return w;
  };
  let pending: { role: 'user'; text: string[]; images: AiImage[] } | { role: 'assistant'; text: string[] } | undefined;
  let seenUser = false;
  const flush = () => {
    if (!pending) return;
    out.push(pending.role === 'user' ? userMessage(pending.text.join('\n\n'), pending.images) : { role: 'assistant', content: pending.text.join('\n\n') });
    pending = undefined;
  };
  for (const turn of turns) {
    const t = opts.toolRole === false ? withoutToolRole(turn) : turn;
    if (t.role === 'system') continue;
    if (t.role === 'tool') {
      flush();
      out.push({ role: 'tool', tool_call_id: wireId(t.callId), name: t.name, content: t.content || '(no output)' });
      continue;
    }
    if (t.role === 'assistant' && 'toolCalls' in t) {
      flush();
      out.push({
        role: 'assistant',
        content: t.content,
        tool_calls: t.toolCalls.map((c) => ({ id: wireId(c.id), type: 'function', function: { name: c.name, arguments: c.arguments || '{}' } })),
      });
      continue;
    }
    const text = t.content.trim();
    const images = t.role === 'user' ? (t.images ?? []) : [];
    if (!text && !images.length) continue;
    if (t.role === 'assistant' && !seenUser) continue;
    if (t.role === 'user') seenUser = true;
    if (pending?.role !== t.role) {
      flush();
      pending = t.role === 'user' ? { role: 'user', text: [], images: [] } : { role: 'assistant', text: [] };
    }
    if (text) pending.text.push(text);
    if (pending.role === 'user') pending.images.push(...images);
  }
  flush();
  return out;
}

/**
 * The start of a tool's output sent as a user turn: the model must not take what a tool returned
 * (a web page, an old conversation) for the user's own request.
 */
export const TOOL_OUTPUT_LABEL = 'Output of the tool';

/** A tool call or result as a plain turn (a template without a tool role); other turns as they are. */
function withoutToolRole(t: ChatTurn): ChatTurn {
  if (t.role === 'tool') return { role: 'user', content: `[${TOOL_OUTPUT_LABEL} ${t.name}, not written by the user]\n${t.content.trim() || '(no output)'}` };
  if (t.role !== 'assistant' || !('toolCalls' in t)) return t;
  const calls = t.toolCalls.map((c) => `[Called the tool ${c.name} with ${c.arguments.trim() || '{}'}]`);
  return { role: 'assistant', content: [t.content.trim(), ...calls].filter(Boolean).join('\n') };
}

function userMessage(text: string, images: AiImage[]): unknown {
  if (!images.length) return { role: 'user', content: text };
  return {
    role: 'user',
    content: [
      ...(text ? [{ type: 'text', text }] : []),
      ...images.map((i) => ({ type: 'image_url', image_url: { url: i.imageUrl, ...(i.detail ? { detail: i.detail } : {}) } })),
    ],
  };
}
