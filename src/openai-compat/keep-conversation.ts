import { appendItem, createConversation } from '../chat/conversation.store';
import type { Tx, Work } from '../db/work';
import type { ConversationItem } from '../db/schema';
import { imagesOf, textOf, type ChatMessage } from './chat-request';
import type { AnswerCollector } from './collect-answer';

const TITLE_CHARS = 80;

/**
 * `store: true` (docs/openai-api.md, "What is stored"): the exchange kept as a conversation of
 * the caller's, which the web app lists like any other. Kept: the request's user and assistant
 * messages in order (their text, and a user message's images as `input_image` parts), then the
 * answer's text with the model that wrote it (`{type: "response.model", model}`, as Parley's own
 * answers carry it) and, when it called tools, the calls (`{type: "tool_calls", calls}`). Not
 * kept: system and developer messages, tool results, reasoning. `conversationId`: a conversation
 * the exchange continues (a Responses call's `previous_response_id`), else a new one titled with
 * the first line of the first user message. An exchange with an assistant (`assistant:<id>`)
 * starts a conversation with it, so the web app goes on with the same assistant.
 */
export function* keepAsConversation(
  tx: Tx,
  input: { userId: string; messages: readonly ChatMessage[]; answer: AnswerCollector; model: string; conversationId?: string; assistantId?: string },
  now: number,
): Work<string> {
  const kept = input.messages.filter((m) => m.role === 'user' || (m.role === 'assistant' && textOf(m.content).trim()));
  const firstUser = textOf(kept.find((m) => m.role === 'user')?.content).trim();
  const line = firstUser.split('\n')[0] ?? '';
  const conversationId =
    input.conversationId ??
    (yield* createConversation(tx, { ownerId: input.userId, title: line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line, assistantId: input.assistantId }, now)).id;
  for (const m of kept) {
    const parts = m.role === 'user' ? imagesOf(m.content).map((i) => ({ type: 'input_image', imageUrl: i.url, ...(i.detail ? { detail: i.detail } : {}) })) : [];
    yield* appendItem(tx, { conversationId, role: m.role as 'user' | 'assistant', content: textOf(m.content), parts, authorId: m.role === 'user' ? input.userId : null }, now);
  }
  const { answer } = input;
  const parts: unknown[] = [{ type: 'response.model', model: input.model }];
  if (answer.toolCalls.length) parts.unshift({ type: 'tool_calls', calls: answer.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) });
  yield* appendItem(tx, { conversationId, role: 'assistant', content: answer.text, parts }, now);
  return conversationId;
}

/**
 * A kept conversation read back as chat messages, for a request continuing it
 * (`previous_response_id`): its user and assistant items, a user item's images, and an answer's
 * tool calls again as `tool_calls`, so the function outputs the caller sends next follow them.
 */
export function historyOf(items: readonly ConversationItem[]): ChatMessage[] {
  return items.flatMap((item): ChatMessage[] => {
    const parts = item.parts as { type?: string; imageUrl?: string; detail?: string; calls?: { id: string; name: string; arguments: string }[] }[];
    if (item.role === 'user') {
      const images = parts.filter((p) => p?.type === 'input_image' && typeof p.imageUrl === 'string').map((p) => ({ type: 'image_url', image_url: { url: p.imageUrl!, ...(p.detail ? { detail: p.detail } : {}) } }));
      return [{ role: 'user', content: images.length ? [{ type: 'text', text: item.content }, ...images] : item.content }];
    }
    if (item.role !== 'assistant') return [];
    const calls = parts.find((p) => p?.type === 'tool_calls')?.calls ?? [];
    return [{ role: 'assistant', content: item.content || null, ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}) }];
  });
}
