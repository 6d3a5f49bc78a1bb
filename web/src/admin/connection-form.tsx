import { useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import { FormButtons } from '../shared/form-buttons';
import { API_NAMES, apisOf, exampleUrl, KIND_NAMES, optionsFor, type Connection, type Kind, type OptionField } from './connections-api';

interface Props {
  /** The connection being changed; absent, a new one is added. */
  editing?: Connection;
  onSaved(connection: Connection, verb: 'Added' | 'Saved'): void;
  onCancel(): void;
}

const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** An option's value as the API takes it: a number for a number field, `null` to remove one left empty. */
function optionValue(field: OptionField, raw: string): string | number | null {
  const v = raw.trim();
  if (v === '') return null;
  return field.type === 'number' ? Number(v) : v;
}

/**
 * Adding or changing a connection (admin/addConnection, admin/updateConnection): the kind, then
 * the API, address, credential and options that kind takes. The credential is never shown: the
 * field starts empty, and when editing an empty field keeps the one stored.
 */
export function ConnectionForm({ editing, onSaved, onCancel }: Props) {
  const [kind, setKind] = useState<Kind>(editing?.kind ?? 'chat');
  const [api, setApi] = useState(editing?.api ?? apisOf('chat')[0]!);
  const [name, setName] = useState(editing?.name ?? '');
  const [baseUrl, setBaseUrl] = useState(editing?.baseUrl ?? '');
  const [credential, setCredential] = useState('');
  const [clearCredential, setClearCredential] = useState(false);
  const [enabled, setEnabled] = useState(editing?.enabled ?? true);
  const [allowPrivate, setAllowPrivate] = useState(editing?.allowPrivate ?? true);
  const [options, setOptions] = useState<Record<string, string>>(() => Object.fromEntries(Object.entries(editing?.options ?? {}).map(([k, v]) => [k, text(v)])));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const fields = optionsFor(kind, api);
  const id = editing ? `edit-${editing.id}` : 'add-connection';

  const chooseKind = (k: Kind) => {
    setKind(k);
    setApi(apisOf(k)[0]!);
    setOptions({});
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const given = Object.fromEntries(fields.map((f) => [f.key, optionValue(f, options[f.key] ?? '')]));
    try {
      if (!editing) {
        const body = {
          name: name.trim(),
          kind,
          api,
          baseUrl: baseUrl.trim(),
          ...(credential ? { credential } : {}),
          options: Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null)),
          enabled,
          allowPrivate,
        };
        onSaved((await call<{ connection: Connection }>('admin/addConnection', body)).connection, 'Added');
      } else {
        const changed = Object.fromEntries(Object.entries(given).filter(([k, v]) => text(v) !== text(editing.options[k])));
        const body = {
          id: editing.id,
          ...(name.trim() !== editing.name ? { name: name.trim() } : {}),
          ...(api !== editing.api ? { api } : {}),
          ...(baseUrl.trim() !== editing.baseUrl ? { baseUrl: baseUrl.trim() } : {}),
          // Left empty, the stored credential stays; removing it is a choice of its own.
          ...(clearCredential ? { credential: null } : credential ? { credential } : {}),
          ...(Object.keys(changed).length ? { options: changed } : {}),
          enabled,
          allowPrivate,
        };
        onSaved((await call<{ connection: Connection }>('admin/updateConnection', body)).connection, 'Saved');
      }
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="admin-manage admin-form" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h4 id={`${id}-title`}>{editing ? `Edit ${editing.name}` : 'Add a connection'}</h4>
      <div class="admin-fields">
        {!editing && (
          <label>
            Kind
            <select value={kind} onChange={(e) => chooseKind(e.currentTarget.value as Kind)}>
              {Object.entries(KIND_NAMES).map(([k, label]) => (
                <option key={k} value={k}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        )}
        {apisOf(kind).length > 1 && (
          <label>
            API
            <select value={api} onChange={(e) => setApi(e.currentTarget.value)}>
              {apisOf(kind).map((a) => (
                <option key={a} value={a}>
                  {API_NAMES[a]}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Name
          <input required maxLength={40} value={name} placeholder="laptop" onInput={(e) => setName(e.currentTarget.value)} aria-describedby={`${id}-name-hint`} />
        </label>
        <p class="hint" id={`${id}-name-hint`}>
          Lowercase letters, digits and hyphens: it starts the ids of its models (<code>{name || 'laptop'}/model</code>){editing ? ', so renaming changes them' : ''}.
        </p>
        <label class="admin-wide">
          Base URL
          <input required inputMode="url" spellcheck={false} value={baseUrl} placeholder={exampleUrl(kind, api)} onInput={(e) => setBaseUrl(e.currentTarget.value)} />
        </label>
        <label>
          {editing?.hasCredential ? 'New API key or token' : 'API key or token'}
          <input type="password" autoComplete="new-password" spellcheck={false} value={credential} disabled={clearCredential} onInput={(e) => setCredential(e.currentTarget.value)} aria-describedby={`${id}-key-hint`} />
        </label>
        <p class="hint" id={`${id}-key-hint`}>
          {editing?.hasCredential
            ? 'Left empty, the stored one stays. It is kept sealed and never shown again.'
            : 'Optional: local servers usually need none. It is kept sealed and never shown again.'}
        </p>
        {editing?.hasCredential && (
          <label class="check">
            <input type="checkbox" checked={clearCredential} onChange={(e) => setClearCredential(e.currentTarget.checked)} /> Remove the stored key
          </label>
        )}
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled
        </label>
        <label class="check">
          <input type="checkbox" checked={allowPrivate} onChange={(e) => setAllowPrivate(e.currentTarget.checked)} /> May be on this machine or the local network
        </label>
      </div>
      {fields.length > 0 && (
        <fieldset class="admin-fields">
          <legend>Options</legend>
          {fields.map((f) => (
            <OptionInput key={f.key} id={id} field={f} value={options[f.key] ?? ''} onChange={(v) => setOptions({ ...options, [f.key]: v })} />
          ))}
        </fieldset>
      )}
      <FormButtons submit={editing ? 'Save connection' : 'Add connection'} busy={busy} onCancel={onCancel} />
      <Note error={error} done={busy ? (editing ? 'Saving…' : 'Adding…') : undefined} />
    </form>
  );
}

function OptionInput({ id, field, value, onChange }: { id: string; field: OptionField; value: string; onChange(v: string): void }) {
  const hint = `${id}-${field.key}-hint`;
  // The hint beside the label, not in it: it describes the field, the label names it.
  return (
    <div class="admin-option">
      <label>
        {field.label}
        {field.type === 'mode' ? (
          <select value={value || 'auto'} onChange={(e) => onChange(e.currentTarget.value)} aria-describedby={hint}>
            <option value="auto">auto</option>
            <option value="on">on</option>
            <option value="off">off</option>
          </select>
        ) : field.type === 'number' ? (
          <input type="number" min={field.min} max={field.max} step={1} value={value} onInput={(e) => onChange(e.currentTarget.value)} aria-describedby={hint} />
        ) : (
          <input type="text" value={value} onInput={(e) => onChange(e.currentTarget.value)} aria-describedby={hint} />
        )}
      </label>
      <span class="hint" id={hint}>
        {field.hint}
      </span>
    </div>
  );
}
