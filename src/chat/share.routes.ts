import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, forbidden, notFound } from '../http/errors';
import { checkCap } from '../http/user-caps';
import type { AppDeps } from '../deps';
import type { ConversationShare } from '../db/schema';
import { iso } from '../ids';
import { findUserByEmail, normaliseEmail } from '../account/account.store';
import { findGroupByConversationId } from '../groups/group.store';
import { canWriteConversation, findConversationById } from './conversation.store';
import {
  RECEIVED_LIST_MAX,
  acceptShare,
  countOffersBy,
  declineShare,
  deleteShare,
  findOffer,
  findShare,
  insertOffer,
  listOffersBy,
  listPendingSharesFor,
  renewOffer,
} from './share.store';

/*
 * Sharing a conversation is an offer the recipient accepts or declines (docs/chat.md, "Sharing").
 * The owner's answer is the same whether or not the address has an account: the same status and
 * body, the same statements run, and an offer row either way, so neither the answer, its time,
 * the owner's list nor their cap on offers tells which.
 */

const Timestamp = t.String({ format: 'date-time' });
const ShareRef = t.Object({ shareId: t.String() });
const Success = t.Object({ success: t.Boolean() });

const ReceivedShareSchema = t.Object({
  shareId: t.String(),
  conversationId: t.String(),
  title: t.String(),
  sharedBy: t.Object({ name: t.String(), email: t.String() }),
  createdAt: Timestamp,
});
const SentShareSchema = t.Object({ shareId: t.String(), conversationId: t.String(), title: t.String(), email: t.String(), createdAt: Timestamp });

/** An offer addressed to the caller and still pending: unknown, accepted, withdrawn or declined → 404, someone else's → 403. */
async function receivedShare(deps: AppDeps, shareId: string, userId: string): Promise<ConversationShare> {
  const share = await deps.store.read((tx) => findShare(tx, shareId));
  if (!share) throw notFound();
  if (share.recipientId !== userId) throw forbidden();
  if (share.status !== 'pending') throw notFound();
  return share;
}

export const shareOperations = [
  defineOperation({
    path: 'chat/shareConversation',
    summary: 'Offer another user writer access to a conversation; they accept or decline it',
    description:
      'Owner only (403); unknown conversation → 404; a group chat\'s conversation → 409 (people join a group by invite). ' +
      'The answer is `{success: true}` whether or not an account has that e-mail, and nothing is shared yet: the recipient sees the offer in chat/listPendingShares and accepts it (chat/acceptShare) or declines it. ' +
      'Offering again changes nothing; offering to oneself or to a writer does nothing. An owner with PARLEY_SHARES_MAX_PENDING_PER_USER offers not accepted: 409.',
    input: t.Object({ conversationId: t.String(), email: t.String({ minLength: 3, maxLength: 320 }) }),
    output: Success,
    errors: [403, 404, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const email = normaliseEmail(input.email);
      const max = deps.config.sharesMaxPendingPerUser;
      await deps.store.write(function* (tx) {
        const c = yield* findConversationById(tx, input.conversationId);
        if (!c) throw notFound();
        if (c.ownerId !== user.id) throw forbidden();
        if (yield* findGroupByConversationId(tx, c.id))
          throw new AppError('CONFLICT', { message: "A group chat's conversation is shared by inviting people to the group (groupChat/createInvite)." });
        // The same statements whether or not the address has an account.
        const other = yield* findUserByEmail(tx, email);
        const writes = yield* canWriteConversation(tx, c.id, other?.id ?? '');
        const offer = yield* findOffer(tx, c.id, email);
        // Only the owner's own address and the conversation's writers (whom the owner let in) go no further.
        if (other?.id === user.id || writes) return;
        if (offer) return yield* renewOffer(tx, offer, other?.id ?? null, deps.now());
        yield* checkCap(tx, 'sharesMaxPendingPerUser', user.id, max, countOffersBy(tx, user.id), (n) => [
          `You have ${n} shares that are not accepted`,
          'Withdraw some first (chat/withdrawShare).',
        ]);
        yield* insertOffer(tx, { conversationId: c.id, sharerId: user.id, email, recipientId: other?.id ?? null }, deps.now());
      });
      return { success: true };
    },
  }),
  defineOperation({
    path: 'chat/listPendingShares',
    summary: 'Conversations others offered the caller, waiting for an answer, newest first',
    description: `At most ${RECEIVED_LIST_MAX}, the newest (answering one shows the next). A pending share gives no access and is not in chat/listConversations until accepted.`,
    input: t.Object({}),
    output: t.Object({ shares: t.Array(ReceivedShareSchema) }),
    handler: async ({ user, deps }) => ({
      shares: (await deps.store.read((tx) => listPendingSharesFor(tx, user.id))).map(({ share, title, sharer }) => ({
        shareId: share.id,
        conversationId: share.conversationId,
        title,
        sharedBy: sharer,
        createdAt: iso(share.createdAt),
      })),
    }),
  }),
  defineOperation({
    path: 'chat/acceptShare',
    summary: 'Accept a conversation offered to the caller: they become its writer',
    description:
      'The conversation is then in chat/listConversations, and the offer gone from both lists. A share offered to someone else: 403; unknown, withdrawn, declined or accepted already: 404.',
    input: ShareRef,
    output: t.Object({ success: t.Boolean(), conversationId: t.String() }),
    errors: [403, 404],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const share = await receivedShare(deps, input.shareId, user.id);
      // Withdrawn or answered between the check and this write: as if this came after.
      if (!(await deps.store.write((tx) => acceptShare(tx, share.id, user.id, deps.now())))) throw notFound();
      return { success: true, conversationId: share.conversationId };
    },
  }),
  defineOperation({
    path: 'chat/declineShare',
    summary: 'Decline a conversation offered to the caller',
    description:
      'It leaves chat/listPendingShares, and the same offer made again stays declined; the owner is not told (their chat/listSentShares shows it as before). A share offered to someone else: 403; unknown, withdrawn, declined or accepted already: 404.',
    input: ShareRef,
    output: Success,
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const share = await receivedShare(deps, input.shareId, user.id);
      if (!(await deps.store.write((tx) => declineShare(tx, share.id, user.id, deps.now())))) throw notFound();
      return { success: true };
    },
  }),
  defineOperation({
    path: 'chat/listSentShares',
    summary: "The caller's offers not accepted yet, newest first",
    description:
      'Of one conversation with `conversationId`. An offer stays here until it is accepted or withdrawn: a declined one and one to an address without an account look alike, as pending ones do, so the list tells nothing the answer to chat/shareConversation did not.',
    input: t.Object({ conversationId: t.Optional(t.String()) }),
    output: t.Object({ shares: t.Array(SentShareSchema) }),
    handler: async ({ input, user, deps }) => ({
      shares: (await deps.store.read((tx) => listOffersBy(tx, user.id, input.conversationId))).map(({ share, title }) => ({
        shareId: share.id,
        conversationId: share.conversationId,
        title,
        email: share.email,
        createdAt: iso(share.createdAt),
      })),
    }),
  }),
  defineOperation({
    path: 'chat/withdrawShare',
    summary: 'Withdraw one of the caller\'s offers that is not accepted yet',
    description: 'The offer is gone from both lists (room under PARLEY_SHARES_MAX_PENDING_PER_USER); an accepted share is no offer any more. Another user\'s offer: 403; unknown or accepted: 404.',
    input: ShareRef,
    output: Success,
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const share = await deps.store.read((tx) => findShare(tx, input.shareId));
      if (!share) throw notFound();
      if (share.sharerId !== user.id) throw forbidden();
      if (!(await deps.store.write((tx) => deleteShare(tx, share.id)))) throw notFound();
      return { success: true };
    },
  }),
];
