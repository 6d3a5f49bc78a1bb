import './assistants.css';
import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import { AssistantForm, type AssistantInput, type AvatarChange } from './assistant-form';
import type { Assistant } from './assistant-types';

const whoFor = (a: Assistant) => (a.visibility === 'private' ? 'Yours' : a.visibility === 'everyone' ? 'Shared with everyone' : `Shared with ${a.tiers.join(', ') || 'no tier yet'}`);

/**
 * The user's assistants (`assistants/*`, docs/assistants.md): the list, a new one, and each of
 * their own to edit or delete; the shared ones they may use are listed, and admins edit those too.
 */
export function AssistantsPage({ isAdmin }: { isAdmin: boolean }) {
  const [list, setList] = useState<{ assistants: Assistant[]; max: number }>();
  // The assistant being edited, 'new' for a new one; none: the list alone.
  const [editing, setEditing] = useState<string>();
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  const load = () => call<{ assistants: Assistant[]; max: number }>('assistants/list').then(setList, (err) => setNote({ error: messageOf(err) }));
  useEffect(() => void load(), []);
  const act = async (doing: () => Promise<unknown>, done: string) => {
    setNote({});
    try {
      await doing();
      // The list as it now is before the note says what was done, so both tell the same.
      await load();
      setNote({ done });
      setEditing(undefined);
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  // The fields first, then the avatar (an operation of its own, as it carries an image).
  const save = (a: Assistant | undefined) => (input: AssistantInput, avatar: AvatarChange) =>
    act(async () => {
      const saved = a
        ? (await call<{ assistant: Assistant }>('assistants/update', { assistantId: a.id, ...input })).assistant
        : (await call<{ assistant: Assistant }>('assistants/create', input)).assistant;
      try {
        if (avatar === 'remove') await call('assistants/removeAvatar', { assistantId: saved.id });
        else if (avatar) await call('assistants/setAvatar', { assistantId: saved.id, dataUrl: avatar.dataUrl });
      } catch (err) {
        // Saved without its image: the form goes on editing it (a second Create would make another).
        await load();
        setEditing(saved.id);
        throw err;
      }
    }, `${String(input.name).trim()} was ${a ? 'saved' : 'created'}.`);
  const remove = (a: Assistant) => {
    if (confirm(`Delete the assistant "${a.name}"? Its conversations go on with Parley itself.`)) void act(() => call('assistants/delete', { assistantId: a.id }), `${a.name} was deleted.`);
  };
  const own = list?.assistants.filter((a) => !a.shared).length ?? 0;
  const chosen = list?.assistants.find((a) => a.id === editing);

  return (
    <section class="page assistants" aria-labelledby="assistants-title">
      <h2 id="assistants-title">Assistants</h2>
      <p>An assistant is instructions, a model and a choice of tools saved under a name. Pick one under the chat to start a conversation with it.</p>
      <Note {...note} />
      {editing === 'new' || chosen ? (
        <AssistantForm key={editing} assistant={chosen} isAdmin={isAdmin} onSave={save(chosen)} onCancel={() => setEditing(undefined)} />
      ) : (
        <button type="button" onClick={() => (setNote({}), setEditing('new'))} disabled={!isAdmin && list !== undefined && own >= list.max}>
          New assistant
        </button>
      )}
      {list && (
        <p class="hint">
          {own} of at most {list.max} of your own.
        </p>
      )}
      {list?.assistants.length === 0 && <p class="hint">No assistants yet.</p>}
      {list && list.assistants.length > 0 && (
        <ul class="assistant-list" aria-label="Your assistants">
          {list.assistants.map((a) => (
            <li key={a.id}>
              <span class="assistant-name">
                {a.avatarUrl && <img class="assistant-avatar" src={a.avatarUrl} alt="" width={32} height={32} />}
                <strong>{a.name}</strong> <span class="hint">{whoFor(a)}</span>
                {a.description && <span class="hint assistant-description">{a.description}</span>}
              </span>
              {a.canEdit && (
                <>
                  <button type="button" aria-label={`Edit ${a.name}`} onClick={() => (setNote({}), setEditing(a.id))}>
                    Edit
                  </button>
                  <button type="button" aria-label={`Delete ${a.name}`} onClick={() => remove(a)}>
                    Delete
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
