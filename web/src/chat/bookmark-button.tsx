import { useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf } from '../shared/note';

interface Group {
  id: string;
  name: string;
}

/** The group offered when the user has none yet. */
const FIRST_GROUP = 'Saved';

/**
 * Bookmark the conversation, or one answer of it (`itemId`), into one of the user's bookmark
 * groups (`bookmarks/addItem`, docs/chat.md); Settings → Bookmarks lists them. The groups are
 * asked for when the form opens, since most answers are never bookmarked; a user without one
 * makes it here.
 */
export function BookmarkButton({ conversationId, itemId, label }: { conversationId: string; itemId?: string; label: string }) {
  const [groups, setGroups] = useState<Group[]>();
  const [choice, setChoice] = useState('');
  const [newName, setNewName] = useState(FIRST_GROUP);
  const [status, setStatus] = useState('');
  const [error, setError] = useState<string>();
  const open = async () => {
    if (groups) return setGroups(undefined);
    setStatus('');
    setError(undefined);
    try {
      const list = (await call<{ groups: Group[] }>('bookmarks/listGroups')).groups;
      setGroups(list);
      setChoice(list[0]?.id ?? '');
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const group = choice ? groups!.find((g) => g.id === choice)! : await call<Group>('bookmarks/createGroup', { name: newName.trim() });
      await call('bookmarks/addItem', { groupId: group.id, conversationId, ...(itemId ? { itemId } : {}) });
      setGroups(undefined);
      setStatus(`Bookmarked in ${group.name}.`);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <>
      <button type="button" aria-expanded={!!groups} onClick={() => void open()}>
        {label}
      </button>
      <span role="status" class="hint">
        {status}
      </span>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {groups && (
        <form class="bookmark-form" onSubmit={save} aria-label={label}>
          <label>
            Into
            <select value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
              {groups.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name}
                </option>
              ))}
              <option value="">A new group…</option>
            </select>
          </label>
          {!choice && (
            <label>
              New group's name
              <input required maxLength={200} value={newName} onInput={(e) => setNewName(e.currentTarget.value)} />
            </label>
          )}
          <button type="submit">Bookmark</button>
          <button type="button" onClick={() => setGroups(undefined)}>
            Cancel
          </button>
        </form>
      )}
    </>
  );
}
