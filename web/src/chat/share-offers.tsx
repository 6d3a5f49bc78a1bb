import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, call, CONVERSATIONS_CHANGED } from '../shared/api';
import { navigate } from '../shared/router';

/** A conversation someone offered the user, as chat/listPendingShares gives it. */
export interface ShareOffer {
  shareId: string;
  conversationId: string;
  title: string;
  sharedBy: { name: string; email: string };
  createdAt: string;
}

/** How often the offers are asked again while the app is open: an offer can arrive at any time. */
const OFFERS_POLL_MS = 30_000;

/**
 * The offers waiting for the user's answer: asked at start, every 30 seconds, when the tab comes
 * back into view and when the conversations changed. A pending offer gives nothing until it is
 * accepted (docs/chat.md, "Sharing"), so the list is only what to answer.
 */
export function useShareOffers() {
  const [offers, setOffers] = useState<ShareOffer[]>([]);
  const refresh = useCallback(() => {
    call<{ shares: ShareOffer[] }>('chat/listPendingShares').then((r) => setOffers(r.shares), () => undefined);
  }, []);
  useEffect(() => {
    refresh();
    const timer = setInterval(refresh, OFFERS_POLL_MS);
    const onVisible = () => document.visibilityState === 'visible' && refresh();
    addEventListener(CONVERSATIONS_CHANGED, refresh);
    document.addEventListener('visibilitychange', onVisible);
    return () => (clearInterval(timer), removeEventListener(CONVERSATIONS_CHANGED, refresh), document.removeEventListener('visibilitychange', onVisible));
  }, [refresh]);
  return { offers, refresh };
}

const titleOf = (o: ShareOffer) => o.title || 'Untitled conversation';
const whoOf = (o: ShareOffer) => o.sharedBy.name || o.sharedBy.email;

/**
 * The offers at the top of the conversation list: who offers what, Accept (the conversation opens)
 * and Decline (after confirming: the offerer is not told, and the same offer does not come back).
 */
export function ShareOffers({ offers, onAnswered }: { offers: ShareOffer[]; onAnswered(): void }) {
  const [error, setError] = useState<string>();
  if (!offers.length) return null;

  const answer = async (o: ShareOffer, accept: boolean) => {
    if (!accept && !confirm(`Decline "${titleOf(o)}" from ${whoOf(o)}? ${whoOf(o)} is not told, and the same offer will not come back.`)) return;
    setError(undefined);
    try {
      await call(accept ? 'chat/acceptShare' : 'chat/declineShare', { shareId: o.shareId });
    } catch (err) {
      setError(err instanceof ApiError && err.status === 404 ? 'That offer was withdrawn, or answered from another device.' : 'The answer could not be sent. Try again.');
      return onAnswered();
    }
    if (!accept) return onAnswered();
    // The conversation is the user's now: the list (and these offers) load again, and it opens.
    dispatchEvent(new Event(CONVERSATIONS_CHANGED));
    navigate(`/c/${o.conversationId}`);
  };

  return (
    <section class="share-offers" aria-labelledby="share-offers-title">
      <h2 id="share-offers-title">Offered to you</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <ul>
        {offers.map((o) => (
          <li key={o.shareId}>
            <p>
              <strong>{whoOf(o)}</strong> {o.sharedBy.name && <span class="hint">({o.sharedBy.email})</span>} offers you “{titleOf(o)}”
            </p>
            <span class="actions">
              <button type="button" class="accept" aria-label={`Accept "${titleOf(o)}" from ${whoOf(o)}`} onClick={() => void answer(o, true)}>
                Accept
              </button>
              <button type="button" aria-label={`Decline "${titleOf(o)}" from ${whoOf(o)}`} onClick={() => void answer(o, false)}>
                Decline
              </button>
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
