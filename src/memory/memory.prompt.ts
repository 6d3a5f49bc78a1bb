import type { AppDeps } from '../deps';
import type { Memory, User } from '../db/schema';
import type { AiMessage } from '../ai/ai.types';
import { estimateTokens } from '../ai/count-tokens';
import { listMemories } from './memory.store';
import { oneLine } from './memory.rules';

/**
 * Of the prompt's room (the context budget, src/ai/fit-context.ts), what memories may take when a
 * request would not fit: an eighth, the rest is the conversation's.
 */
export const MEMORY_CONTEXT_SHARE = 1 / 8;

/** One line, read by the model before the list: what the memories are and how to change them. */
export const MEMORY_HEADING =
  'Memories: facts the user let you keep across conversations, the most recently updated first. Use them where they help; do not recite them unasked. To change one, call update_memory or forget_memory with its id.';

/** What a turn of the user gets of memory: undefined when their `enableMemories` is off. */
export interface TurnMemory {
  /** The system message holding the memories that fit; undefined when the user keeps none. */
  message?: AiMessage;
}

/** `user`: the turn's user as read when it began (its switch decides, as it does for the memory tools). */
export async function memoryForTurn(deps: AppDeps, user: Pick<User, 'id' | 'enableMemories'> | undefined): Promise<TurnMemory | undefined> {
  if (!user?.enableMemories) return undefined;
  const memories = await deps.store.read((tx) => listMemories(tx, user.id));
  return { message: memoryMessage(memories, deps.config.memoryPromptTokens) };
}

/**
 * The memories as one system text: every one while they fit `maxTokens` (estimated on the safe
 * side, so the bound holds whatever the model's tokenizer), else the most recently updated that
 * do. Relevance is not guessed: recency is the one order a user can predict and correct.
 */
export function memoryMessage(memories: readonly Memory[], maxTokens: number): AiMessage | undefined {
  let used = estimateTokens(MEMORY_HEADING);
  const lines: string[] = [];
  for (const m of memories) {
    const line = `- [${m.id}] ${oneLine(m.content)}`;
    const cost = estimateTokens(line) + 1;
    if (used + cost > maxTokens) break;
    used += cost;
    lines.push(line);
  }
  if (!lines.length) return undefined;
  return { role: 'system', content: [MEMORY_HEADING, ...lines].join('\n'), share: MEMORY_CONTEXT_SHARE };
}
