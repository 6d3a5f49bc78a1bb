import './groups.css';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { navigate, onLinkClick } from '../shared/router';
import type { GroupChat } from './group-stream';
export { Group } from './group-chat';

const when = (iso: string) => new Date(iso).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });

/** The user's group chats, most recently active first, and a form to make a new one. */
export function Groups() {
  const [groups, setGroups] = useState<(GroupChat & { memberCount: number })[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<{ groupChats: (GroupChat & { memberCount: number })[] }>('groupChat/listGroupChats').then(
      (r) => setGroups(r.groupChats),
      (err) => setError(err instanceof ApiError ? err.message : 'The groups could not be loaded.'),
    );
  }, []);
  return (
    <section class="page groups" aria-labelledby="groups-title">
      <h2 id="groups-title">Groups</h2>
      <p class="hint">Chat with family or friends, and ask the assistant together by writing @ai in a message.</p>
      <CreateGroup onError={setError} />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <h3>Your groups</h3>
      {groups === undefined ? (
        !error && <p class="hint">Loading…</p>
      ) : groups.length === 0 ? (
        <p class="hint">No groups yet. Create one, or open an invite link someone sent you.</p>
      ) : (
        <ul class="group-list">
          {groups.map((g) => (
            <li key={g.id}>
              <a href={`/g/${g.id}`} onClick={onLinkClick(`/g/${g.id}`)}>
                {g.name}
              </a>
              <span class="hint">
                {g.memberCount} {g.memberCount === 1 ? 'member' : 'members'} · active {when(g.updatedAt)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function CreateGroup({ onError }: { onError(message: string): void }) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const create = async (e: Event) => {
    e.preventDefault();
    if (!name.trim() || busy) return;
    setBusy(true);
    await call<GroupChat>('groupChat/createGroupChat', { name: name.trim() }).then(
      (g) => navigate(`/g/${g.id}`),
      (err) => (onError(err instanceof ApiError ? err.message : 'The group could not be created.'), setBusy(false)),
    );
  };
  return (
    <form class="create-group" onSubmit={create}>
      <label for="group-name">New group's name</label>
      <div class="create-row">
        <input id="group-name" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />
        <button type="submit" disabled={busy || !name.trim()}>
          Create group
        </button>
      </div>
    </form>
  );
}

/**
 * An invite link. The API tells nothing about a group before joining it (an invite's code is all
 * the link holds), so the page says what the link is and joins on a click: a link opened by a
 * chat app's preview never makes anyone a member.
 */
export function JoinGroup({ token }: { token: string }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const join = async () => {
    setBusy(true);
    setError(undefined);
    await call<GroupChat>('groupChat/joinGroup', { code: token }).then(
      (g) => navigate(`/g/${g.id}`, true),
      (err) => {
        setBusy(false);
        setError(
          err instanceof ApiError && (err.status === 404 || err.status === 400)
            ? 'This invite link has expired or is not valid. Ask a member of the group for a new one.'
            : err instanceof ApiError
              ? err.message
              : 'Parley could not be reached. Try again.',
        );
      },
    );
  };
  return (
    <section class="page join" aria-labelledby="join-title">
      <h2 id="join-title">Join a group</h2>
      <p>Someone invited you to a group chat on Parley. Join it to see its name, its members and its messages; you can leave it at any time.</p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <button type="button" class="primary" onClick={join} disabled={busy}>
        Join the group
      </button>
    </section>
  );
}
