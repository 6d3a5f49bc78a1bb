import type { AppDeps } from '../deps';

/** One line of the context the assistant reads. */
export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What the assistant produces while it answers (the deep-research stream's event shapes). */
export type AssistantEvent =
  | { type: 'text.delta'; delta: string }
  | { type: 'web_search.in_progress'; itemId: string; query?: string | null; numResults?: number | null; country?: string | null; safeSearch?: boolean | null }
  | { type: 'web_search.completed'; itemId: string; results: { link: string; title: string; snippet: string }[] };

export interface ResponderInput {
  turns: ChatTurn[];
  handle: string;
  groupName: string;
}

/** Answers a group conversation; the seam between group chats and whatever AI provider is configured. */
export type GroupResponder = (input: ResponderInput) => AsyncIterable<AssistantEvent>;

export const systemPrompt = (input: ResponderInput) =>
  `You are @${input.handle}, an assistant taking part in the group chat "${input.groupName}". ` +
  `Each member's message starts with their name. Answer the latest message that addresses you, briefly and in the language it was written in.`;

/** The configured responder, or undefined when no AI provider is set up. */
export function groupResponderOf(_deps: AppDeps): GroupResponder | undefined {
  return undefined;
}
