import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { forbidden, invalidInput, notFound } from '../http/errors';
import { FEEDBACK_REASONS, type AnswerFeedback } from '../db/schema';
import { iso } from '../ids';
import { canWriteConversation, findConversationById } from '../chat/conversation.store';
import { countFeedbackOf, findFeedback, listFeedbackInConversation, listFeedbackOnItems, setFeedback } from './feedback.store';
import { checkCap } from '../http/user-caps';
import { answerRefOf, findRatableAnswer, withdrawFeedback } from './feedback-target';

/** A comment's limit: room for a paragraph or two, not an essay. */
export const COMMENT_MAX_CHARS = 2000;
/** Ids one getFeedback asks about: a page of group messages (at most 200) fits. */
const MAX_ITEM_IDS = 200;

const Id = t.String({ minLength: 1, maxLength: 100 });
const Rating = t.Union([t.Literal('up'), t.Literal('down')]);
const Reason = t.Union(FEEDBACK_REASONS.map((r) => t.Literal(r)));
const AnswerRef = {
  itemId: t.Optional(Id),
  groupChatId: t.Optional(Id),
  messageId: t.Optional(Id),
};
const Timestamp = t.String({ format: 'date-time' });
const FeedbackSchema = t.Object({
  itemId: t.String(),
  rating: Rating,
  reasons: t.Array(Reason),
  comment: t.Union([t.String(), t.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const feedbackView = (f: AnswerFeedback) => ({
  itemId: f.itemId,
  rating: f.rating,
  reasons: f.reasons,
  comment: f.comment,
  createdAt: iso(f.createdAt),
  updatedAt: iso(f.updatedAt),
});

const NAMING =
  'Name the answer by `itemId` (an assistant item of a conversation the caller owns or writes to: a chat or research answer, or a group message) ' +
  'or by `groupChatId` + `messageId` (an assistant message of a group the caller belongs to), not both (400). ';

export const feedbackOperations = [
  defineOperation({
    path: 'feedback/setFeedback',
    summary: 'Rate an assistant answer: thumbs up or down, with optional reasons and comment',
    description:
      NAMING +
      'Unknown item or group: 404; an answer the caller cannot read: 403; an item that is not an assistant answer, or a message of another group: 400. ' +
      'One rating per user and answer: a second set replaces the first whole (reasons and comment left out are cleared; `createdAt` stays). ' +
      'A first rating by a caller who has rated PARLEY_FEEDBACK_MAX_PER_USER answers: 409 (changing a rating always works). ' +
      `Reasons come from a fixed list (a repeated one counts once); a blank comment is stored as none. See docs/feedback.md.`,
    input: t.Object({
      ...AnswerRef,
      rating: Rating,
      reasons: t.Optional(t.Array(Reason, { maxItems: FEEDBACK_REASONS.length })),
      comment: t.Optional(t.String({ maxLength: COMMENT_MAX_CHARS })),
    }),
    output: FeedbackSchema,
    errors: [403, 404, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const ref = answerRefOf(input);
      const comment = input.comment?.trim() || null;
      const row = await deps.store.write(function* (tx) {
        const item = yield* findRatableAnswer(tx, ref, user.id);
        if (!(yield* findFeedback(tx, user.id, item.id)))
          yield* checkCap(tx, 'feedbackMaxPerUser', user.id, deps.config.feedbackMaxPerUser, countFeedbackOf(tx, user.id), (n) => [
            `You have rated ${n} answers`,
            'Withdraw some ratings first (feedback/deleteFeedback).',
          ]);
        return yield* setFeedback(tx, { userId: user.id, itemId: item.id, rating: input.rating, reasons: input.reasons ?? [], comment }, deps.now());
      });
      return feedbackView(row);
    },
  }),
  defineOperation({
    path: 'feedback/getFeedback',
    summary: "The caller's ratings of some answers, or of every answer of one conversation",
    description:
      'Give `itemIds` (up to 200: the answers on screen) or `conversationId` (every rated answer of it, in order; a group chat\'s `conversationId` works for its members), not both. ' +
      'Answers the caller has not rated are absent. By `conversationId`: unknown 404, one the caller cannot read 403. ' +
      'By `itemIds` only the caller\'s own ratings are read, so no id is refused.',
    input: t.Object({
      itemIds: t.Optional(t.Array(Id, { minItems: 1, maxItems: MAX_ITEM_IDS })),
      conversationId: t.Optional(Id),
    }),
    output: t.Object({ feedback: t.Array(FeedbackSchema) }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      if ((input.itemIds === undefined) === (input.conversationId === undefined))
        throw invalidInput([{ path: input.itemIds ? [] : ['itemIds'], message: 'give either itemIds or conversationId' }]);
      const { conversationId, itemIds } = input;
      const rows = await deps.store.read(function* (tx) {
        if (itemIds) {
          const order = new Map(itemIds.map((id, i) => [id, i]));
          return (yield* listFeedbackOnItems(tx, user.id, itemIds)).sort((x, y) => order.get(x.itemId)! - order.get(y.itemId)!);
        }
        if (!(yield* findConversationById(tx, conversationId!))) throw notFound();
        if (!(yield* canWriteConversation(tx, conversationId!, user.id))) throw forbidden();
        return yield* listFeedbackInConversation(tx, user.id, conversationId!);
      });
      return { feedback: rows.map(feedbackView) };
    },
  }),
  defineOperation({
    path: 'feedback/deleteFeedback',
    summary: "Withdraw the caller's rating of an answer",
    description:
      NAMING +
      '`success` is true when a rating was withdrawn, false when there was none. The caller\'s own rating can be withdrawn even from an answer they can no longer read ' +
      '(they left the group); otherwise the refusals are those of setFeedback.',
    input: t.Object(AnswerRef),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const ref = answerRefOf(input);
      return { success: await deps.store.write((tx) => withdrawFeedback(tx, ref, user.id)) };
    },
  }),
];
