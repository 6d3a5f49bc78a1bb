import './memories.css';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { onLinkClick } from '../shared/router';
import { Note } from '../shared/note';

interface Memory {
  id: string;
  content: string;
  createdAt: string;
  updatedAt: string;
}
const said = (err: unknown, fallback: string) => (err instanceof ApiError ? err.message : fallback);

/**
 * What the assistant remembers about the user (`memories/*`, docs/memory.md): the list, newest
 * change first; add one, edit one, forget one or all. The `enableMemories` preference decides
 * whether the assistant reads and writes them; the list can be managed either way.
 */
export function MemoriesPage() {
  const [memories, setMemories] = useState<Memory[]>();
  const [max, setMax] = useState(0);
  const [enabled, setEnabled] = useState<boolean>();
  const [text, setText] = useState('');
  const [editing, setEditing] = useState<string>();
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  const load = () =>
    call<{ memories: Memory[]; max: number }>('memories/listMemories').then(
      (r) => (setMemories(r.memories), setMax(r.max)),
      (err) => setNote({ error: said(err, 'Your memories could not be loaded.') }),
    );
  useEffect(() => {
    void load();
    call<{ enableMemories: boolean }>('preferences/get').then((p) => setEnabled(p.enableMemories), () => undefined);
  }, []);
  const act = async (doing: () => Promise<unknown>, done: string, fallback: string) => {
    setNote({});
    try {
      await doing();
      setNote({ done });
      await load();
      return true;
    } catch (err) {
      setNote({ error: said(err, fallback) });
      return false;
    }
  };
  const add = async (e: Event) => {
    e.preventDefault();
    if (await act(() => call('memories/addMemory', { content: text.trim() }), 'Remembered.', 'The memory could not be added.')) setText('');
  };
  const forgetAll = () => {
    if (confirm('Forget everything Parley remembers about you? This cannot be undone.'))
      void act(() => call('memories/deleteAllMemories'), 'Every memory was forgotten.', 'The memories could not be forgotten.');
  };

  return (
    <section class="page memories" aria-labelledby="memories-title">
      <h2 id="memories-title">Memories</h2>
      <p>Facts the assistant keeps about you across chats and research, such as "I am vegetarian" or "I write in French". It uses them in its answers and can save, change or forget them itself while you chat.</p>
      {enabled === false && (
        <p class="hint">
          The assistant does not use memories now: turn on "Remember things across conversations" in{' '}
          <a href="/settings" onClick={onLinkClick('/settings')}>
            Settings
          </a>
          . You can still manage them here.
        </p>
      )}
      {enabled && <p class="hint">The assistant uses these memories in your chats and research.</p>}
      <form class="inline-form" onSubmit={add}>
        <label for="memory-new">Something to remember</label>
        <input id="memory-new" value={text} maxLength={500} autoComplete="off" onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit" disabled={!text.trim()}>
          Add memory
        </button>
      </form>
      <Note {...note} />
      {memories && (
        <p class="hint">
          {memories.length} of at most {max} memories.
        </p>
      )}
      {memories?.length === 0 && <p class="hint">Nothing remembered yet.</p>}
      {memories && memories.length > 0 && (
        <>
          <ul class="memory-list" aria-label="Your memories">
            {memories.map((m) => (
              <li key={m.id}>
                {editing === m.id ? (
                  <EditMemory
                    memory={m}
                    onSave={async (content) => {
                      if (await act(() => call('memories/updateMemory', { id: m.id, content }), 'The memory was changed.', 'The memory could not be changed.')) setEditing(undefined);
                    }}
                    onCancel={() => setEditing(undefined)}
                  />
                ) : (
                  <>
                    <span class="memory-text">{m.content}</span>
                    <span class="hint">{new Date(m.updatedAt).toLocaleDateString()}</span>
                    <button type="button" aria-label={`Edit the memory "${m.content}"`} onClick={() => setEditing(m.id)}>
                      Edit
                    </button>
                    <button
                      type="button"
                      aria-label={`Forget the memory "${m.content}"`}
                      onClick={() => act(() => call('memories/deleteMemory', { id: m.id }), 'The memory was forgotten.', 'The memory could not be forgotten.')}
                    >
                      Forget
                    </button>
                  </>
                )}
              </li>
            ))}
          </ul>
          <button type="button" onClick={forgetAll}>
            Forget everything
          </button>
        </>
      )}
    </section>
  );
}

function EditMemory({ memory, onSave, onCancel }: { memory: Memory; onSave(content: string): void; onCancel(): void }) {
  const [value, setValue] = useState(memory.content);
  return (
    <form
      class="memory-edit"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) onSave(value.trim());
      }}
    >
      <label>
        <span class="visually-hidden">Edit the memory</span>
        <input value={value} maxLength={500} autoFocus onInput={(e) => setValue(e.currentTarget.value)} onKeyDown={(e) => e.key === 'Escape' && onCancel()} />
      </label>
      <button type="submit" disabled={!value.trim()}>
        Save
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
