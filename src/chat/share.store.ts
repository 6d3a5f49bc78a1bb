import { and, desc, eq } from 'drizzle-orm';
import type { ConversationShare } from '../db/schema';
import { allRows, countRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';
import { addWriter } from './conversation.store';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/** The most pending shares one list answers (the newest): a user's offers are capped, not the offers they receive. */
export const RECEIVED_LIST_MAX = 100;

export function* findShare({ db, t }: Tx, id: string): Work<ConversationShare | undefined> {
  return yield* getRow(db.select().from(t.conversationShares).where(eq(t.conversationShares.id, id)));
}

export function* findOffer({ db, t }: Tx, conversationId: string, email: string): Work<ConversationShare | undefined> {
  const s = t.conversationShares;
  return yield* getRow(db.select().from(s).where(and(eq(s.conversationId, conversationId), eq(s.email, email))));
}

/** The offers a user made that are not accepted (their cap: PARLEY_SHARES_MAX_PENDING_PER_USER). */
export const countOffersBy = (tx: Tx, sharerId: string) => countRows(tx, tx.t.conversationShares, eq(tx.t.conversationShares.sharerId, sharerId));

/** A new pending offer, unless one for this conversation and address was made meanwhile. */
export function* insertOffer({ db, t }: Tx, input: { conversationId: string; sharerId: string; email: string; recipientId: string | null }, now: number): Work<void> {
  yield* exec(db.insert(t.conversationShares).values({ id: newId(), ...input, status: 'pending', createdAt: now, updatedAt: now }).onConflictDoNothing());
}

/**
 * A pending offer made again names the account the address has now (one made since, or none);
 * a declined one stays declined, so asking again does not put it back in front of its recipient.
 */
export function* renewOffer({ db, t }: Tx, offer: ConversationShare, recipientId: string | null, now: number): Work<void> {
  if (offer.status !== 'pending' || offer.recipientId === recipientId) return;
  yield* exec(db.update(t.conversationShares).set({ recipientId, updatedAt: now }).where(eq(t.conversationShares.id, offer.id)));
}

export interface ReceivedShare {
  share: ConversationShare;
  title: string;
  sharer: { name: string; email: string };
}

/** The offers waiting for `recipientId`, newest first (at most RECEIVED_LIST_MAX). */
export function* listPendingSharesFor({ db, t }: Tx, recipientId: string): Work<ReceivedShare[]> {
  const s = t.conversationShares;
  return yield* allRows(
    db
      .select({ share: s, title: t.conversations.title, sharer: { name: t.users.name, email: t.users.email } })
      .from(s)
      .innerJoin(t.conversations, eq(t.conversations.id, s.conversationId))
      .innerJoin(t.users, eq(t.users.id, s.sharerId))
      .where(and(eq(s.recipientId, recipientId), eq(s.status, 'pending')))
      .orderBy(desc(s.createdAt), desc(s.id))
      .limit(RECEIVED_LIST_MAX),
  );
}

/** The offers `sharerId` made that are not accepted, newest first; of one conversation when given. */
export function* listOffersBy({ db, t }: Tx, sharerId: string, conversationId?: string): Work<{ share: ConversationShare; title: string }[]> {
  const s = t.conversationShares;
  return yield* allRows(
    db
      .select({ share: s, title: t.conversations.title })
      .from(s)
      .innerJoin(t.conversations, eq(t.conversations.id, s.conversationId))
      .where(and(eq(s.sharerId, sharerId), conversationId === undefined ? undefined : eq(s.conversationId, conversationId)))
      .orderBy(desc(s.createdAt), desc(s.id)),
  );
}

/** Still pending and addressed to `recipientId`: the offer an answer takes. */
const answerable = (t: Tx['t'], id: string, recipientId: string) =>
  and(eq(t.conversationShares.id, id), eq(t.conversationShares.recipientId, recipientId), eq(t.conversationShares.status, 'pending'));

/**
 * The offer goes and its recipient becomes a writer, in one transaction (run with `store.write`);
 * false when it was no longer pending (withdrawn or answered meanwhile). The offer is deleted
 * first: a withdrawal at the same moment waits for it, or this finds nothing.
 */
export function* acceptShare(tx: Tx, id: string, recipientId: string, now: number): Work<boolean> {
  const { db, t } = tx;
  const taken = yield* getRow(db.delete(t.conversationShares).where(answerable(t, id, recipientId)).returning());
  if (!taken) return false;
  yield* addWriter(tx, taken.conversationId, recipientId, now);
  return true;
}

/** False when it was no longer pending. */
export function* declineShare({ db, t }: Tx, id: string, recipientId: string, now: number): Work<boolean> {
  return (yield* allRows(db.update(t.conversationShares).set({ status: 'declined', updatedAt: now }).where(answerable(t, id, recipientId)).returning({ id: t.conversationShares.id }))).length > 0;
}

/** False when it was gone already. */
export function* deleteShare({ db, t }: Tx, id: string): Work<boolean> {
  return (yield* allRows(db.delete(t.conversationShares).where(eq(t.conversationShares.id, id)).returning({ id: t.conversationShares.id }))).length > 0;
}
