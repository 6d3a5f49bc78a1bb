import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { Note } from '../shared/note';

/** An offer of the owner's not accepted yet, as chat/listSentShares gives it. */
interface SentShare {
  shareId: string;
  email: string;
  createdAt: string;
}

/*
 * Sharing is an offer (docs/chat.md, "Sharing"): the server answers the same whether or not an
 * account has the address, so the dialog says the same thing either way and never suggests the
 * address was found. Its list of offers, likewise, cannot tell a declined offer from one nobody got.
 */
const offeredTo = (email: string) => `Offered to ${email}. If someone has an account with this address, they'll see your offer and can accept it.`;

/** Why an offer or a withdrawal was refused, in words for this dialog. */
function refusal(err: unknown, doing: string): string {
  if (!(err instanceof ApiError)) return `The ${doing} could not be sent. Check the connection and try again.`;
  if (err.status === 429) return 'Too many changes in a short time. Wait a minute and try again.';
  if (err.status === 409 && err.data?.reason === 'cap')
    return `You have ${err.data.max} offers nobody has accepted, the most this server allows. Withdraw some first (each conversation's Share… lists its offers).`;
  if (err.status === 403) return 'Only the owner of this conversation can share it.';
  if (err.status === 404) return doing === 'offer' ? 'This conversation no longer exists.' : 'This offer was accepted or withdrawn already.';
  // A group chat's conversation (409): the server says how its people join instead.
  return err.message;
}

/**
 * The owner's sharing dialog: offer the conversation to an e-mail address, see the offers not
 * accepted yet and withdraw them. A modal `<dialog>`: focus stays inside, Escape closes it.
 */
export function ShareDialog({ conversationId, title, onClose }: { conversationId: string; title: string; onClose(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<SentShare[]>();
  const [listError, setListError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ error?: string; done?: string }>({});

  const load = () =>
    call<{ shares: SentShare[] }>('chat/listSentShares', { conversationId }).then(
      (r) => (setSent(r.shares), setListError(undefined)),
      () => setListError('The offers could not be loaded.'),
    );
  useEffect(() => {
    dialog.current?.showModal();
    void load();
  }, []);

  const offer = async (e: Event) => {
    e.preventDefault();
    const address = email.trim();
    if (!address || busy) return;
    setBusy(true);
    try {
      await call('chat/shareConversation', { conversationId, email: address });
      setEmail('');
      setNote({ done: offeredTo(address) });
      await load();
    } catch (err) {
      setNote({ error: refusal(err, 'offer') });
    } finally {
      setBusy(false);
    }
  };

  const withdraw = async (share: SentShare) => {
    try {
      await call('chat/withdrawShare', { shareId: share.shareId });
      setNote({ done: `The offer to ${share.email} is withdrawn.` });
    } catch (err) {
      setNote({ error: refusal(err, 'withdrawal') });
    }
    await load();
    // Its button is gone: focus goes back to the address, not to the page under the dialog.
    input.current?.focus();
  };

  return (
    <dialog ref={dialog} class="share-dialog" aria-labelledby="share-title" aria-describedby="share-what" onClose={onClose}>
      <h2 id="share-title">Share “{title || 'Untitled conversation'}”</h2>
      <p id="share-what">
        The person you offer it to can read the whole conversation and write in it once they accept. Only you can share or delete it. If someone has an
        account with this address, they'll see your offer and can accept it.
      </p>
      <form class="share-form" onSubmit={offer}>
        <label for="share-email">E-mail address</label>
        <input id="share-email" ref={input} type="email" required maxLength={320} spellcheck={false} autoFocus value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Offer to share
        </button>
      </form>
      <Note error={note.error} done={note.done} />
      <section aria-labelledby="share-sent-title">
        <h3 id="share-sent-title">Offers not accepted yet</h3>
        <p class="hint">
          An offer stays here until it is accepted or you withdraw it. Parley does not say whether an address has an account, or whether an offer was declined.
        </p>
        {listError && (
          <p role="alert" class="error">
            {listError}
          </p>
        )}
        {sent && sent.length === 0 && <p class="hint">None.</p>}
        {sent && sent.length > 0 && (
          <ul class="share-sent" aria-labelledby="share-sent-title">
            {sent.map((s) => (
              <li key={s.shareId}>
                <span class="share-email">{s.email}</span>
                <time class="hint" dateTime={s.createdAt}>
                  {new Date(s.createdAt).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' })}
                </time>
                <button type="button" aria-label={`Withdraw the offer to ${s.email}`} onClick={() => void withdraw(s)}>
                  Withdraw
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}
