import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { Icon } from '../shared/icons';
import { messageOf, Note } from '../shared/note';
import { ModelForm } from './model-form';
import { AdminTable } from './admin-table';
import type { Capabilities, Defaults, ModelSetting, Purpose } from './connections-api';

type Outcome = { error?: string; done?: string };

/** What a model can do, in a few words. */
export function canDo(c: Capabilities): string {
  const words = [c.vision && 'images', c.tools && 'tools', c.thinking && 'thinking'].filter(Boolean).join(', ');
  const context = c.contextTokens ? `${c.contextTokens.toLocaleString('en')} tokens` : '';
  return [words, context].filter(Boolean).join(' · ') || '—';
}

/**
 * The model catalogue as admins see it (admin/listModelSettings): every model of every enabled
 * chat connection, hidden ones too, in the users' order, with the defaults above.
 */
export function AdminModels({ version }: { version: number }) {
  const [models, setModels] = useState<ModelSetting[]>();
  const [defaults, setDefaults] = useState<Defaults>();
  const [editing, setEditing] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<Outcome>({});
  // The model just moved: its row moved, and its button with it, so the keyboard is put back there once the list has drawn.
  const [moved, setMoved] = useState<{ id: string; by: -1 | 1 }>();
  const load = () =>
    call<{ models: ModelSetting[]; defaults: Defaults }>('admin/listModelSettings').then(
      (r) => (setModels(r.models), setDefaults(r.defaults)),
      (err) => setNote({ error: messageOf(err) }),
    );
  // `version` moves when a connection changed: the catalogue follows the connections.
  useEffect(() => void load(), [version]);
  useEffect(() => {
    if (!moved) return;
    const buttons = [...document.querySelectorAll<HTMLButtonElement>(`[data-move="${CSS.escape(moved.id)}"]`)];
    // The same arrow, or the other one when the model reached either end.
    (buttons.find((b) => b.dataset.by === String(moved.by) && !b.disabled) ?? buttons.find((b) => !b.disabled))?.focus();
    setMoved(undefined);
  }, [models, moved]);

  /**
   * Moving a model: the admin's positions come first in the list, so the models down to the moved
   * pair are numbered 0, 1, 2… and only the ones whose number changes are written.
   */
  const move = async (index: number, by: -1 | 1) => {
    if (!models || busy) return;
    const order = [...models];
    const [m] = order.splice(index, 1);
    order.splice(index + by, 0, m!);
    const upTo = Math.max(models.filter((x) => x.position !== null).length, Math.max(index, index + by) + 1);
    setBusy(true);
    try {
      for (let p = 0; p < upTo; p++) if (order[p]!.position !== p) await call('admin/setModelSettings', { id: order[p]!.id, position: p });
      setNote({ done: `Moved ${m!.name} ${by < 0 ? 'up' : 'down'}.` });
    } catch (err) {
      setNote({ error: messageOf(err) });
    } finally {
      setBusy(false);
      await load();
      setMoved({ id: m!.id, by });
    }
  };
  const saved = (m: ModelSetting) => {
    setEditing(undefined);
    setNote({ done: `Saved ${m.id}.` });
    void load();
  };

  const current = models?.find((m) => m.id === editing);
  return (
    <section class="admin-section" aria-labelledby="admin-models" aria-busy={busy}>
      <h3 id="admin-models">Models</h3>
      <p class="hint">
        Every model of the enabled chat connections, in the order users see them. Rename, hide or move a model, say what it can do, and which
        subscription tiers may use it.
      </p>
      {defaults && models && <DefaultModels defaults={defaults} models={models} onSaved={(d) => (setDefaults(d), setNote({ done: 'Saved the default models.' }))} />}
      <Note {...note} />
      {models?.length === 0 && <p class="hint">No models: add a chat connection above.</p>}
      {models && models.length > 0 && (
        <AdminTable caption="Models" class="admin-models" scrollLabel="Models table" columns={['Order', 'Model', 'Connection', 'Available', 'Can use', 'Tiers', 'Listed']} actions>
          {models.map((m, i) => (
            <tr key={m.id} class={editing === m.id ? 'chosen' : undefined}>
              <td class="admin-order">
                <button type="button" aria-label={`Move ${m.id} up`} data-move={m.id} data-by="-1" disabled={i === 0} onClick={() => move(i, -1)}>
                  <Icon name="arrow-up" />
                </button>
                <button type="button" aria-label={`Move ${m.id} down`} data-move={m.id} data-by="1" disabled={i === models.length - 1} onClick={() => move(i, 1)}>
                  <Icon name="arrow-down" />
                </button>
              </td>
              <th scope="row">
                {m.name}
                {m.name !== m.model && <span class="hint admin-doc">{m.model}</span>}
              </th>
              <td>{m.connection}</td>
              <td>{m.available ? 'Yes' : 'No: its server did not answer'}</td>
              <td>{canDo(m.capabilities)}</td>
              <td>{m.tiers ? m.tiers.join(', ') || 'none' : 'every tier'}</td>
              <td>{m.hidden ? 'Hidden' : 'Listed'}</td>
              <td>
                <button type="button" aria-label={`Edit ${m.id}`} aria-expanded={editing === m.id} onClick={() => setEditing(editing === m.id ? undefined : m.id)}>
                  Edit
                </button>
              </td>
            </tr>
          ))}
        </AdminTable>
      )}
      {current && <ModelForm key={current.id} model={current} onSaved={saved} onCancel={() => setEditing(undefined)} />}
    </section>
  );
}

const PURPOSES: [Purpose, string][] = [
  ['chat', 'Chat'],
  ['research', 'Research'],
  ['group', 'Group assistant (@ai)'],
  ['title', 'Titles'],
];

/** The defaults (admin/setDefaultModels): only the ones changed are sent. */
function DefaultModels({ defaults, models, onSaved }: { defaults: Defaults; models: ModelSetting[]; onSaved(d: Defaults): void }) {
  const [chosen, setChosen] = useState<Defaults>(defaults);
  const [error, setError] = useState<string>();
  const usable = models.filter((m) => !m.hidden);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const changed = Object.fromEntries(PURPOSES.filter(([p]) => chosen[p] !== defaults[p]).map(([p]) => [p, chosen[p]]));
    try {
      onSaved((await call<{ defaults: Defaults }>('admin/setDefaultModels', changed)).defaults);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <form class="admin-form" onSubmit={save} aria-labelledby="admin-defaults">
      <h4 id="admin-defaults">Defaults</h4>
      <div class="admin-fields">
        {PURPOSES.map(([p, label]) => (
          <label key={p}>
            {label}
            <select value={chosen[p]} onChange={(e) => setChosen({ ...chosen, [p]: e.currentTarget.value })}>
              {/* A default no listed model matches (its connection disabled) stays visible as what it is. */}
              {!usable.some((m) => m.id === chosen[p]) && <option value={chosen[p]}>{chosen[p] || '(none)'}</option>}
              {usable.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.name} · {m.connection}
                </option>
              ))}
            </select>
          </label>
        ))}
        <p class="hint">Chat: a new chat's model until the user picks another. Titles: for when a model writes conversation titles (they are the first words of the question).</p>
      </div>
      <button type="submit">Save defaults</button>
      <Note error={error} />
    </form>
  );
}
