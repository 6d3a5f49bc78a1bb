import type { ConversationItem } from '../db/schema';
import type { Tx, Work } from '../db/work';
import { forbidden, invalidInput, notFound } from '../http/errors';
import { canWriteConversation, findItemById } from '../chat/conversation.store';
import { findGroupById, findGroupForUser } from '../groups/group.store';
import { findFeedback, removeFeedback } from './feedback.store';

/**
 * An answer is named one of two ways (docs/feedback.md): `itemId`, an item of a conversation the
 * caller can read (a chat or research answer, or a group's message by its item id), or
 * `groupChatId` + `messageId`, a message of a group the caller belongs to. A group message's id
 * is its item's id, so both name the same answer.
 */
export interface AnswerRefInput {
  itemId?: string;
  groupChatId?: string;
  messageId?: string;
}

export type AnswerRef = { itemId: string } | { groupChatId: string; messageId: string };

/** The one way the input names an answer; 400 when it names none, or both. */
export function answerRefOf(input: AnswerRefInput): AnswerRef {
  const group = input.groupChatId !== undefined || input.messageId !== undefined;
  if (input.itemId !== undefined && group) throw invalidInput([{ path: [], message: 'give either itemId, or groupChatId and messageId, not both' }]);
  if (input.itemId !== undefined) return { itemId: input.itemId };
  if (input.groupChatId === undefined && input.messageId === undefined) throw invalidInput([{ path: ['itemId'], message: 'itemId, or groupChatId and messageId, is required' }]);
  if (input.messageId === undefined) throw invalidInput([{ path: ['messageId'], message: 'required with groupChatId' }]);
  if (input.groupChatId === undefined) throw invalidInput([{ path: ['groupChatId'], message: 'required with messageId' }]);
  return { groupChatId: input.groupChatId, messageId: input.messageId };
}

const notAnAnswer = (field: string) => invalidInput([{ path: [field], message: 'not an assistant answer' }]);

/**
 * The answer, if `userId` may rate it: someone who can read it. By item: unknown → 404, a
 * conversation the caller neither owns nor writes to → 403 (the bookmarks' rule). By group
 * message: unknown group → 404, not a member → 403, a message of another group → 400. Either
 * way, an item that is not the assistant's → 400, checked only once the caller may read it.
 */
export function* findRatableAnswer(tx: Tx, ref: AnswerRef, userId: string): Work<ConversationItem> {
  if ('itemId' in ref) {
    const item = yield* findItemById(tx, ref.itemId);
    if (!item) throw notFound();
    if (!(yield* canWriteConversation(tx, item.conversationId, userId))) throw forbidden();
    if (item.role !== 'assistant') throw notAnAnswer('itemId');
    return item;
  }
  const found = yield* findGroupForUser(tx, ref.groupChatId, userId);
  if (!found) throw notFound();
  if (!found.isMember) throw forbidden();
  const item = yield* findItemById(tx, ref.messageId);
  if (!item || item.conversationId !== found.group.conversationId) throw invalidInput([{ path: ['messageId'], message: 'not a message of this group chat' }]);
  if (item.role !== 'assistant') throw notAnAnswer('messageId');
  return item;
}

/**
 * Withdraw the caller's rating. Their own rating goes even from an answer they can no longer
 * read (they left the group, the owner stopped sharing): it is their data. Without one, the
 * answer is checked as for a rating, so the refusals are the same and nothing leaks.
 */
export function* withdrawFeedback(tx: Tx, ref: AnswerRef, userId: string): Work<boolean> {
  const itemId = 'itemId' in ref ? ref.itemId : ref.messageId;
  if ((yield* findFeedback(tx, userId, itemId)) && (yield* namesItsAnswer(tx, ref))) return yield* removeFeedback(tx, userId, itemId);
  yield* findRatableAnswer(tx, ref, userId);
  return false;
}

/** The group form names a message of that very group. */
function* namesItsAnswer(tx: Tx, ref: AnswerRef): Work<boolean> {
  if ('itemId' in ref) return true;
  const [group, item] = [yield* findGroupById(tx, ref.groupChatId), yield* findItemById(tx, ref.messageId)];
  return !!group && !!item && item.conversationId === group.conversationId;
}
