import { and, asc, eq, inArray } from 'drizzle-orm';
import { FEEDBACK_REASONS, type AnswerFeedback, type FeedbackReason } from '../db/schema';
import { allRows, countRows, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

export interface FeedbackInput {
  userId: string;
  itemId: string;
  rating: AnswerFeedback['rating'];
  reasons: readonly FeedbackReason[];
  comment: string | null;
}

/** Each reason once, in the documented list's order: the same set always reads the same. */
export const canonicalReasons = (reasons: readonly FeedbackReason[]): FeedbackReason[] => FEEDBACK_REASONS.filter((r) => reasons.includes(r));

/**
 * Set the user's rating of an answer: a second set replaces the first entirely (reasons and
 * comment included) and keeps its `createdAt`. One statement, so two sets at once cannot make two rows.
 */
export function* setFeedback({ db, t }: Tx, input: FeedbackInput, now: number): Work<AnswerFeedback> {
  const values = { rating: input.rating, reasons: canonicalReasons(input.reasons), comment: input.comment, updatedAt: now };
  const row = yield* getRow(
    db
      .insert(t.answerFeedback)
      .values({ id: newId(), userId: input.userId, itemId: input.itemId, createdAt: now, ...values })
      .onConflictDoUpdate({ target: [t.answerFeedback.userId, t.answerFeedback.itemId], set: values })
      .returning(),
  );
  return row!;
}

/** The answers a user has rated (their cap: PARLEY_FEEDBACK_MAX_PER_USER). */
export const countFeedbackOf = (tx: Tx, userId: string) => countRows(tx, tx.t.answerFeedback, eq(tx.t.answerFeedback.userId, userId));

export function* findFeedback({ db, t }: Tx, userId: string, itemId: string): Work<AnswerFeedback | undefined> {
  return yield* getRow(db.select().from(t.answerFeedback).where(and(eq(t.answerFeedback.userId, userId), eq(t.answerFeedback.itemId, itemId))));
}

/** True when there was a rating to withdraw. */
export function* removeFeedback({ db, t }: Tx, userId: string, itemId: string): Work<boolean> {
  const gone = yield* allRows(
    db
      .delete(t.answerFeedback)
      .where(and(eq(t.answerFeedback.userId, userId), eq(t.answerFeedback.itemId, itemId)))
      .returning({ id: t.answerFeedback.id }),
  );
  return gone.length > 0;
}

/** The user's ratings among `itemIds` (those without one are simply absent). */
export function* listFeedbackOnItems({ db, t }: Tx, userId: string, itemIds: readonly string[]): Work<AnswerFeedback[]> {
  if (!itemIds.length) return [];
  return yield* allRows(db.select().from(t.answerFeedback).where(and(eq(t.answerFeedback.userId, userId), inArray(t.answerFeedback.itemId, [...itemIds]))));
}

/** The user's ratings of one conversation's answers, in the conversation's order. */
export function* listFeedbackInConversation({ db, t }: Tx, userId: string, conversationId: string): Work<AnswerFeedback[]> {
  const rows = yield* allRows(
    db
      .select({ feedback: t.answerFeedback })
      .from(t.answerFeedback)
      .innerJoin(t.conversationItems, eq(t.conversationItems.id, t.answerFeedback.itemId))
      .where(and(eq(t.answerFeedback.userId, userId), eq(t.conversationItems.conversationId, conversationId)))
      .orderBy(asc(t.conversationItems.position)),
  );
  return rows.map((r) => r.feedback);
}
