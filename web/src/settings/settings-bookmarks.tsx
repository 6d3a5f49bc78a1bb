import { useEffect, useState } from 'preact/hooks';
import { call, type Conversation } from '../shared/api';
import { onLinkClick } from '../shared/router';
import { useOutcome } from './settings-shared';

interface Bookmark {
  id: string;
  conversationId: string;
  itemId: string | null;
}
interface BookmarkGroup {
  id: string;
  name: string;
  items: Bookmark[];
}

/** The user's bookmark groups and what each holds: make a group, delete one, take a bookmark out. */
export function BookmarksSection() {
  const [groups, setGroups] = useState<BookmarkGroup[]>();
  const [titles, setTitles] = useState<Record<string, string>>({});
  const [name, setName] = useState('');
  const outcome = useOutcome();
  const load = () => call<{ groups: BookmarkGroup[] }>('bookmarks/listGroups').then((r) => setGroups(r.groups), (err) => outcome.failed(err, 'Loading your bookmarks'));
  useEffect(() => {
    void load();
    // Bookmarks carry only ids: the titles come from the recent conversations (older ones get a plain name).
    call<{ conversations: Conversation[] }>('chat/listConversations', { limit: 100 }).then(
      (r) => setTitles(Object.fromEntries(r.conversations.map((c) => [c.id, c.title || 'Untitled conversation']))),
      () => undefined,
    );
  }, []);

  const act = async (doing: string, operation: string, body: unknown, done: string) => {
    outcome.clear();
    try {
      await call(operation, body);
      outcome.done(done);
      await load();
      return true;
    } catch (err) {
      outcome.failed(err, doing);
      return false;
    }
  };

  const create = async (e: Event) => {
    e.preventDefault();
    const trimmed = name.trim();
    if (await act('Creating the group', 'bookmarks/createGroup', { name: trimmed }, `The group "${trimmed}" was created.`)) setName('');
  };
  const remove = (g: BookmarkGroup) => {
    if (confirm(`Delete the group "${g.name}" and its ${g.items.length} bookmark(s)? The conversations themselves stay.`))
      void act('Deleting the group', 'bookmarks/deleteGroup', { id: g.id }, `The group "${g.name}" was deleted.`);
  };
  const titleOf = (b: Bookmark) => (titles[b.conversationId] ?? 'A conversation') + (b.itemId ? ' (one message)' : '');

  return (
    <section class="settings-section" aria-labelledby="bookmarks-title">
      <h3 id="bookmarks-title">Bookmarks</h3>
      <form class="inline-form" onSubmit={create}>
        <label for="group-name">Name of the new group</label>
        <input id="group-name" value={name} maxLength={200} required autoComplete="off" onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={!name.trim()}>
          Create group
        </button>
      </form>
      {outcome.view}
      {groups && groups.length === 0 && <p class="hint">You have no bookmark groups.</p>}
      {groups?.map((g) => (
        <div key={g.id} class="bookmark-group" role="group" aria-labelledby={`group-${g.id}`}>
          <div class="bookmark-group-head">
            <h4 id={`group-${g.id}`}>{g.name}</h4>
            <button type="button" aria-label={`Delete the group "${g.name}"`} onClick={() => remove(g)}>
              Delete
            </button>
          </div>
          {g.items.length === 0 ? (
            <p class="hint">No bookmarks in this group yet.</p>
          ) : (
            <ul class="settings-list">
              {g.items.map((b) => (
                <li key={b.id}>
                  <a href={`/c/${encodeURIComponent(b.conversationId)}`} onClick={onLinkClick(`/c/${encodeURIComponent(b.conversationId)}`)}>
                    {titleOf(b)}
                  </a>
                  <button
                    type="button"
                    aria-label={`Remove "${titleOf(b)}" from "${g.name}"`}
                    onClick={() => act('Removing the bookmark', 'bookmarks/removeItem', { id: b.id }, 'The bookmark was removed.')}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
    </section>
  );
}
