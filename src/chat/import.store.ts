import type { Tx, Work } from '../db/work';
import type { Conversation } from '../db/schema';
import { appendItem, createConversation } from './conversation.store';

export interface ImportedMessage {
  role: 'user' | 'assistant';
  content: string;
  /** When it was written (ms); missing or out of order: the one before it. */
  at?: number;
}

/**
 * A conversation brought in from elsewhere (a ChatGPT export, or Parley's own JSON export), in
 * one transaction: a conversation owned by the caller, then its messages in order, each with its
 * original time where it has one (never in the future, never before the one before it), so the
 * list orders an imported conversation by when it was last active.
 */
export function* importConversation(tx: Tx, input: { ownerId: string; title: string; messages: ImportedMessage[] }, now: number): Work<Conversation> {
  const times = input.messages.map((m) => Math.min(now, m.at ?? Number.NaN));
  let last = Number.isFinite(times[0]) ? times[0]! : now;
  const conversation = yield* createConversation(tx, { ownerId: input.ownerId, title: input.title }, last);
  for (const [i, m] of input.messages.entries()) {
    const at = Number.isFinite(times[i]) && times[i]! >= last ? times[i]! : last;
    last = at;
    yield* appendItem(tx, { conversationId: conversation.id, role: m.role, content: m.content, authorId: m.role === 'user' ? input.ownerId : null }, at);
  }
  return { ...conversation, updatedAt: last };
}
