import { useState } from 'preact/hooks';
import { call, type Conversation } from '../shared/api';
import { onLinkClick } from '../shared/router';
import { ShareOffers, type ShareOffer } from './share-offers';

interface Props {
  conversations: Conversation[];
  /** The signed-in user: a conversation someone else owns was shared with them. */
  userId: string;
  /** Conversations offered to the user, shown first, to accept or decline. */
  offers: ShareOffer[];
  onOffersAnswered(): void;
  current: string | undefined;
  onChanged(): void;
  onDeleted(id: string): void;
}

const titleOf = (c: Conversation) => c.title || 'Untitled conversation';
/** A research run opens on the research page (its searches, sources and report), a chat in the chat. */
const pathOf = (c: Conversation) => (c.lastResponse?.kind === 'research' ? `/research/${c.id}` : `/c/${c.id}`);

/**
 * The user's conversations, most recent first, under the offers waiting for an answer; the search
 * filters the titles already listed (the API has no search yet). One shared with the user is
 * marked so, and has no Delete: only its owner deletes it.
 */
export function ConversationList({ conversations, userId, offers, onOffersAnswered, current, onChanged, onDeleted }: Props) {
  const [query, setQuery] = useState('');
  const [renaming, setRenaming] = useState<string>();
  const q = query.trim().toLowerCase();
  const shown = q ? conversations.filter((c) => titleOf(c).toLowerCase().includes(q)) : conversations;

  const remove = async (c: Conversation) => {
    if (!confirm(`Delete "${titleOf(c)}"? Its messages are deleted too.`)) return;
    await call('chat/deleteConversation', { conversationId: c.id }).catch(() => undefined);
    onDeleted(c.id);
  };

  return (
    <>
      <a class="button new-chat" href="/" onClick={onLinkClick('/')}>
        New chat
      </a>
      <ShareOffers offers={offers} onAnswered={onOffersAnswered} />
      <label class="search">
        <span>Search conversations</span>
        <input type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      </label>
      {shown.length === 0 && <p class="hint">{q ? 'No conversation matches.' : 'No conversations yet.'}</p>}
      <ul class="conversation-list">
        {shown.map((c) => (
          <li key={c.id} class={c.id === current ? 'current' : undefined}>
            {renaming === c.id ? (
              <RenameForm conversation={c} onDone={() => (setRenaming(undefined), onChanged())} />
            ) : (
              <>
                <a href={pathOf(c)} aria-current={c.id === current ? 'page' : undefined} onClick={onLinkClick(pathOf(c))}>
                  {c.ownerId === userId ? (
                    titleOf(c)
                  ) : (
                    <>
                      <span class="title">{titleOf(c)}</span>
                      <span class="shared-mark">Shared with you</span>
                    </>
                  )}
                </a>
                <span class="actions">
                  <button type="button" aria-label={`Rename "${titleOf(c)}"`} onClick={() => setRenaming(c.id)}>
                    Rename
                  </button>
                  {c.ownerId === userId && (
                    <button type="button" aria-label={`Delete "${titleOf(c)}"`} onClick={() => remove(c)}>
                      Delete
                    </button>
                  )}
                </span>
              </>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

function RenameForm({ conversation, onDone }: { conversation: Conversation; onDone(): void }) {
  const [title, setTitle] = useState(conversation.title);
  const save = async (e: Event) => {
    e.preventDefault();
    const t = title.trim();
    if (t) await call('chat/renameConversation', { conversationId: conversation.id, title: t.slice(0, 200) }).catch(() => undefined);
    onDone();
  };
  return (
    <form class="rename" onSubmit={save}>
      <label>
        <span class="visually-hidden">New title</span>
        <input value={title} maxLength={200} autoFocus onInput={(e) => setTitle(e.currentTarget.value)} onKeyDown={(e) => e.key === 'Escape' && onDone()} />
      </label>
      <button type="submit">Save</button>
      <button type="button" onClick={onDone}>
        Cancel
      </button>
    </form>
  );
}
