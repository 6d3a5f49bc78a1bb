import { useEffect, useRef, useState } from 'preact/hooks';
import { call, type ApiKey } from '../shared/api';
import { useCopy, useOutcome, when } from './settings-shared';
import { OpenAiDoor } from './openai-door';

interface NewKey {
  name: string;
  key: string;
}

/**
 * The user's API keys: create one (its secret is shown once, here, until dismissed or the page is
 * left: the server keeps only a hash), see when each was last used, revoke one.
 */
export function ApiKeysSection() {
  const [keys, setKeys] = useState<ApiKey[]>();
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<NewKey>();
  const [busy, setBusy] = useState(false);
  const outcome = useOutcome();
  const nameInput = useRef<HTMLInputElement>(null);
  const load = () => call<{ keys: ApiKey[] }>('auth/listApiKeys').then((r) => setKeys(r.keys), (err) => outcome.failed(err, 'Loading your API keys'));
  useEffect(() => void load(), []);

  const create = async (e: Event) => {
    e.preventDefault();
    outcome.clear();
    setBusy(true);
    try {
      setFresh(await call<NewKey>('auth/createApiKey', { name: name.trim() }));
      setName('');
      await load();
    } catch (err) {
      outcome.failed(err, 'Creating the key');
    } finally {
      setBusy(false);
    }
  };

  const dismiss = () => {
    setFresh(undefined);
    nameInput.current?.focus();
  };

  const revoke = async (k: ApiKey) => {
    if (!confirm(`Revoke the key "${k.name}"? Anything using it stops working at once.`)) return;
    outcome.clear();
    try {
      await call('auth/revokeApiKey', { keyId: k.keyId });
      outcome.done(`The key "${k.name}" was revoked.`);
      await load();
    } catch (err) {
      outcome.failed(err, 'Revoking the key');
    }
  };

  return (
    <section class="settings-section" aria-labelledby="keys-title">
      <h3 id="keys-title">API keys</h3>
      <p class="hint">
        A key lets a program use Parley as you: it sends the key in an <code>x-api-key</code> header (or as <code>Authorization: Bearer</code>). Revoke a key
        you no longer use.
      </p>
      <OpenAiDoor />
      <form class="inline-form" onSubmit={create}>
        <label for="key-name">Name of the new key</label>
        <input id="key-name" ref={nameInput} value={name} maxLength={100} required autoComplete="off" onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={busy || !name.trim()}>
          Create key
        </button>
      </form>
      {fresh && <FreshKey fresh={fresh} onDismiss={dismiss} />}
      {outcome.view}
      {keys && keys.length === 0 && <p class="hint">You have no API keys.</p>}
      {keys && keys.length > 0 && (
        <ul class="settings-list">
          {keys.map((k) => (
            <li key={k.keyId} class={k.revokedAt ? 'revoked' : undefined}>
              <div>
                <strong>{k.name}</strong> <code>{k.prefix}…</code>
              </div>
              <div class="hint">
                Created {when(k.createdAt)} · {k.lastUsedAt ? `last used ${when(k.lastUsedAt)}` : 'never used'}
                {k.revokedAt && ` · revoked ${when(k.revokedAt)}`}
              </div>
              {!k.revokedAt && (
                <button type="button" aria-label={`Revoke the key "${k.name}"`} onClick={() => revoke(k)}>
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The secret of a key just created, with a way to copy it; it takes the focus so no one misses it. */
function FreshKey({ fresh, onDismiss }: { fresh: NewKey; onDismiss(): void }) {
  const box = useRef<HTMLInputElement>(null);
  const { copied, copy } = useCopy(box, 'the key');
  useEffect(() => {
    box.current?.focus();
    box.current?.select();
  }, [fresh]);

  return (
    <div class="fresh-key" role="group" aria-labelledby="fresh-key-title">
      <h4 id="fresh-key-title">Your new key "{fresh.name}"</h4>
      <p id="fresh-key-note">Copy it now: Parley will not show it again. Keep it secret, like a password.</p>
      <div class="fresh-key-row">
        <label class="visually-hidden" for="fresh-key">
          New API key
        </label>
        <input id="fresh-key" ref={box} readOnly value={fresh.key} aria-describedby="fresh-key-note" />
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" onClick={onDismiss}>
          Done
        </button>
      </div>
      <p role="status" class="status">
        {copied}
      </p>
    </div>
  );
}
