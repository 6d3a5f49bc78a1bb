import { useEffect, useState } from 'preact/hooks';
import { call, type ApiKey } from '../shared/api';
import { messageOf, Note } from '../shared/note';

const when = (iso: string) => new Date(iso).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });

/** A user's API keys: a new one is shown once (Parley keeps only its hash), with a Copy button. */
export function AdminKeys({ userId, email }: { userId: string; email: string }) {
  const [keys, setKeys] = useState<ApiKey[]>();
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<{ key: string; name: string }>();
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  const load = () =>
    call<{ keys: ApiKey[] }>('admin/listApiKeys', { userId }).then(
      (r) => setKeys(r.keys),
      (err) => setNote({ error: messageOf(err) }),
    );
  useEffect(() => void load(), [userId]);

  const create = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await call<{ key: string; name: string }>('admin/createApiKey', { userId, name });
      setFresh(r);
      setName('');
      setNote({ done: `Created the key "${r.name}".` });
      await load();
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  const revoke = async (k: ApiKey) => {
    try {
      await call('admin/revokeApiKey', { keyId: k.keyId });
      setNote({ done: `Revoked the key "${k.name}".` });
      await load();
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(fresh!.key);
      setNote({ done: 'Copied the key.' });
    } catch {
      setNote({ error: 'The browser did not allow copying: select the key and copy it yourself.' });
    }
  };

  return (
    <div class="admin-keys">
      <h5>API keys</h5>
      <form class="admin-form" onSubmit={create} aria-label={`New API key for ${email}`}>
        <div class="admin-fields">
          <label>
            Key name
            <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="e.g. phone app" />
          </label>
        </div>
        <button type="submit">Create key</button>
      </form>
      {fresh && (
        <div class="admin-fresh-key">
          <p>
            The key "{fresh.name}", shown this once: copy it now.
          </p>
          <label>
            New API key
            <input readOnly value={fresh.key} onFocus={(e) => e.currentTarget.select()} />
          </label>
          <button type="button" onClick={copy}>
            Copy
          </button>
        </div>
      )}
      <Note {...note} />
      {keys && keys.length === 0 && <p class="hint">No API keys.</p>}
      {keys && keys.length > 0 && (
        <ul class="admin-list" aria-label={`API keys of ${email}`}>
          {keys.map((k) => (
            <li key={k.keyId}>
              <span>
                <strong>{k.name}</strong> <code>{k.prefix}…</code>
              </span>
              <span class="hint">
                created {when(k.createdAt)}
                {k.lastUsedAt && ` · last used ${when(k.lastUsedAt)}`}
                {k.revokedAt && ` · revoked ${when(k.revokedAt)}`}
              </span>
              {!k.revokedAt && (
                <button type="button" aria-label={`Revoke the key ${k.name} (${k.prefix}…)`} onClick={() => revoke(k)}>
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
