import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import { DiscoverServers } from '../setup/discover-servers';
import { ConnectionForm } from './connection-form';
import { API_NAMES, KIND_NAMES, type Connection, type Health, type TestResult } from './connections-api';

type Outcome = { error?: string; done?: string };

const when = (iso: string) => new Date(iso).toLocaleTimeString([], { timeStyle: 'short' });
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The address without user info, whatever the server sent (it refuses URLs carrying one, and masks keys in the query). */
function shownUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return raw;
  }
}

/** A test's or the last look's answer, in a sentence. */
function healthWords(h: Pick<Health, 'latencyMs' | 'error'> & { models: number | null }): string {
  if (h.error) return `${h.error[0]!.toUpperCase()}${h.error.slice(1)}${/[.?!]$/.test(h.error) ? '' : '.'}`;
  return `Reachable in ${h.latencyMs} ms${h.models === null ? '' : `, ${plural(h.models, 'model')}`}.`;
}

const SOURCE: Record<Connection['source'], string> = {
  env: 'The environment file: its settings are changed there and take effect at the next start. Here it can only be disabled or enabled.',
  admin: 'Added by an admin.',
  discovered: 'Found on this machine.',
};

/**
 * Every connection (admin/listConnections): what it is, whether it has a key (never the key), its
 * health from the last look, and Test, Enable/Disable, Edit and Remove. Adding one: by hand, or
 * from the servers found on this machine.
 */
export function AdminConnections({ onChanged }: { onChanged(): void }) {
  const [connections, setConnections] = useState<Connection[]>();
  const [form, setForm] = useState<string>();
  const [tests, setTests] = useState<Record<string, TestResult | 'busy'>>({});
  const [note, setNote] = useState<Outcome>({});
  const load = () => call<{ connections: Connection[] }>('admin/listConnections').then((r) => setConnections(r.connections), (err) => setNote({ error: messageOf(err) }));
  useEffect(() => void load(), []);
  /** After a change: this list, and the model catalogue below, which follows the connections. */
  const reload = () => (onChanged(), load());

  const test = async (c: Connection): Promise<TestResult | undefined> => {
    setTests((t) => ({ ...t, [c.id]: 'busy' }));
    try {
      const r = await call<TestResult>('admin/testConnection', { id: c.id });
      setTests((t) => ({ ...t, [c.id]: r }));
      // What a test learns (reachable or not, its models) is what the catalogue shows next.
      await reload();
      return r;
    } catch (err) {
      setTests(({ [c.id]: _, ...rest }) => rest);
      setNote({ error: messageOf(err) });
    }
  };
  // A connection just added or changed is tested at once: a wrong key or address shows now, not at the next chat.
  const saved = async (c: Connection, verb: 'Added' | 'Saved') => {
    setForm(undefined);
    setNote({ done: `${verb} ${c.name}. Testing it…` });
    await load();
    const r = await test(c);
    if (r) setNote({ done: `${verb} ${c.name}. ${healthWords({ ...r, models: r.error ? null : r.models.length })}` });
  };
  const toggle = (c: Connection) =>
    call('admin/updateConnection', { id: c.id, enabled: !c.enabled }).then(
      () => (setNote({ done: c.enabled ? `Disabled ${c.name}: nothing uses it until it is enabled again.` : `Enabled ${c.name}.` }), reload()),
      (err) => setNote({ error: messageOf(err) }),
    );
  const remove = (c: Connection) => {
    if (!confirm(`Remove the connection ${c.name}? ${c.kind === 'chat' ? 'Its models leave the model list, with their settings.' : ''}`)) return;
    call('admin/removeConnection', { id: c.id }).then(
      () => (setNote({ done: `Removed ${c.name}.` }), reload()),
      (err) => setNote({ error: messageOf(err) }),
    );
  };

  return (
    <section class="admin-section" aria-labelledby="admin-connections">
      <h3 id="admin-connections">Connections</h3>
      <p class="hint">
        The AI servers and other services Parley uses. Chat offers the models of every enabled chat connection; embeddings, images, speech and web
        search each use their first enabled connection.
      </p>
      <div class="button-row">
        <button type="button" onClick={() => setForm(form === 'add' ? undefined : 'add')} aria-expanded={form === 'add'}>
          Add a connection
        </button>
      </div>
      {form === 'add' && <ConnectionForm onSaved={saved} onCancel={() => setForm(undefined)} />}
      <Note {...note} />
      {connections?.length === 0 && <p class="hint">No connections yet: add one, or look for servers on this machine below.</p>}
      {connections && connections.length > 0 && (
        <ul class="admin-list admin-connections" aria-label="Connections">
          {connections.map((c) => (
            <ConnectionItem
              key={c.id}
              c={c}
              tested={tests[c.id]}
              editing={form === c.id}
              onTest={() => void test(c)}
              onToggle={() => void toggle(c)}
              onEdit={() => setForm(form === c.id ? undefined : c.id)}
              onRemove={() => remove(c)}
              onSaved={saved}
              onCancel={() => setForm(undefined)}
            />
          ))}
        </ul>
      )}
      <h4>Servers on this machine</h4>
      <p class="hint">Ollama, llama.cpp, LM Studio, vLLM, LocalAI, Speaches and Kokoro answering on the loopback of the machine Parley runs on.</p>
      <DiscoverServers level={5} onAdded={reload} />
    </section>
  );
}

interface ItemProps {
  c: Connection;
  tested?: TestResult | 'busy';
  editing: boolean;
  onTest(): void;
  onToggle(): void;
  onEdit(): void;
  onRemove(): void;
  onSaved(c: Connection, verb: 'Added' | 'Saved'): void;
  onCancel(): void;
}

function ConnectionItem({ c, tested, editing, onTest, onToggle, onEdit, onRemove, onSaved, onCancel }: ItemProps) {
  const id = `connection-${c.id}`;
  const env = c.source === 'env';
  const options = Object.entries(c.options);
  const result = tested && tested !== 'busy' ? tested : undefined;
  return (
    <li class={`admin-connection${c.enabled ? '' : ' disabled'}`} aria-labelledby={id}>
      <h4 id={id}>
        {c.name} <span class="hint">{KIND_NAMES[c.kind]}</span>
      </h4>
      <dl class="admin-facts">
        <dt>API</dt>
        <dd>{API_NAMES[c.api] ?? c.api}</dd>
        <dt>Base URL</dt>
        <dd>
          <code>{shownUrl(c.baseUrl)}</code>
        </dd>
        <dt>Key</dt>
        <dd>{c.hasCredential ? 'Set (never shown)' : 'None'}</dd>
        <dt>State</dt>
        <dd>{c.enabled ? 'Enabled' : 'Disabled'}</dd>
        <dt>From</dt>
        <dd>{SOURCE[c.source]}</dd>
        {options.length > 0 && (
          <>
            <dt>Options</dt>
            <dd>{options.map(([k, v]) => `${k}: ${v}`).join(', ')}</dd>
          </>
        )}
        <dt>Health</dt>
        <dd class={c.health?.error ? 'error' : undefined}>
          {c.health ? `${healthWords(c.health)} (checked at ${when(c.health.checkedAt)})` : c.enabled ? 'Not checked yet.' : 'Not checked while disabled.'}
        </dd>
      </dl>
      <p role="status" class="hint admin-test-result">
        {tested === 'busy' ? 'Testing…' : result && !result.error && result.models.length ? `Models: ${result.models.join(', ')}` : ''}
      </p>
      <div class="admin-row-buttons">
        <button type="button" onClick={onTest} disabled={tested === 'busy'} aria-label={`Test ${c.name}`}>
          Test
        </button>
        <button type="button" onClick={onToggle} aria-label={`${c.enabled ? 'Disable' : 'Enable'} ${c.name}`}>
          {c.enabled ? 'Disable' : 'Enable'}
        </button>
        {!env && (
          <>
            <button type="button" onClick={onEdit} aria-expanded={editing} aria-label={`Edit ${c.name}`}>
              Edit
            </button>
            <button type="button" onClick={onRemove} aria-label={`Remove ${c.name}`}>
              Remove
            </button>
          </>
        )}
      </div>
      {editing && <ConnectionForm editing={c} onSaved={onSaved} onCancel={onCancel} />}
    </li>
  );
}
