import { useEffect, useState } from 'preact/hooks';
import { call, failure, post } from '../shared/api';
import { messageOf, Note } from '../shared/note';

interface Backup {
  name: string;
  bytes: number;
  createdAt: string;
}
interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
  fix?: string;
}
interface Setting {
  key: string;
  env: string;
  doc: string;
  secret: boolean;
  value: string;
  source: 'default' | 'set';
}

const when = (iso: string) => new Date(iso).toLocaleString([], { dateStyle: 'medium', timeStyle: 'medium' });
const size = (bytes: number) => (bytes < 1e6 ? `${Math.max(1, Math.round(bytes / 1e3))} kB` : `${(bytes / 1e6).toFixed(1)} MB`);

/**
 * Save a backup: the download is a POST (the credential never goes in a URL), so the file comes
 * back to the script and is handed to the browser's own download as a blob.
 */
async function saveBackup(name: string): Promise<void> {
  const res = await post('admin/downloadBackup', { name });
  if (!res.ok) throw await failure(res);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // The browser has the blob once the download starts; keep it a moment for slow starts.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function AdminBackups() {
  const [backups, setBackups] = useState<Backup[]>();
  const [keep, setKeep] = useState(0);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  const load = () =>
    call<{ backups: Backup[]; keep: number }>('admin/listBackups').then(
      (r) => (setBackups(r.backups), setKeep(r.keep)),
      (err) => setNote({ error: messageOf(err) }),
    );
  useEffect(() => void load(), []);
  const start = async () => {
    setBusy(true);
    setNote({ done: 'Backing up…' });
    try {
      const r = await call<{ backup: Backup }>('admin/createBackup');
      setNote({ done: `Backup ${r.backup.name} written (${size(r.backup.bytes)}).` });
      await load();
    } catch (err) {
      setNote({ error: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  const download = (b: Backup) => saveBackup(b.name).then(() => setNote({ done: `Downloading ${b.name}.` }), (err) => setNote({ error: messageOf(err) }));

  return (
    <section class="admin-section" aria-labelledby="admin-backups">
      <h3 id="admin-backups">Backups</h3>
      <p class="hint">
        A consistent copy of the database, taken while Parley runs, kept in the data directory's <code>backups/</code>
        {keep ? ` (the newest ${keep})` : ''}. Download one to keep it somewhere else.
      </p>
      <button type="button" onClick={start} disabled={busy}>
        Back up now
      </button>
      <Note {...note} />
      {backups && backups.length === 0 && <p class="hint">No backups yet.</p>}
      {backups && backups.length > 0 && (
        <ul class="admin-list" aria-label="Backups">
          {backups.map((b) => (
            <li key={b.name}>
              <span>
                <strong>{when(b.createdAt)}</strong> <span class="hint">{size(b.bytes)}</span>
              </span>
              <button type="button" aria-label={`Download the backup of ${when(b.createdAt)}`} onClick={() => download(b)}>
                Download
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

const STATE: Record<Check['status'], string> = { ok: 'OK', warn: 'Warning', fail: 'Problem', skip: 'Skipped' };

/** `parley doctor`'s report: run on demand, since the provider probes take a few seconds. */
export function AdminDoctor() {
  const [checks, setChecks] = useState<Check[]>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setChecks((await call<{ checks: Check[] }>('admin/doctor')).checks);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const problems = checks?.filter((c) => c.status === 'fail').length ?? 0;
  return (
    <section class="admin-section" aria-labelledby="admin-doctor" aria-busy={busy}>
      <h3 id="admin-doctor">Health checks</h3>
      <p class="hint">The checks of <code>parley doctor</code>: data directory, database, settings, image codec, every enabled connection, sign-in.</p>
      <button type="button" onClick={run} disabled={busy}>
        {busy ? 'Checking…' : checks ? 'Run the checks again' : 'Run the checks'}
      </button>
      <Note error={error} done={checks && (problems ? `${problems} problem(s) to fix.` : 'No problems found.')} />
      {checks && (
        <ul class="admin-list admin-checks" aria-label="Health check results">
          {checks.map((c, i) => (
            <li key={i} class={`check-${c.status}`}>
              <span>
                <span class="admin-state">{STATE[c.status]}</span> <strong>{c.name}</strong>
              </span>
              <span>{c.detail}</span>
              {c.fix && c.status !== 'ok' && <span class="hint">To fix: {c.fix}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The settings the server runs with, read-only; secrets arrive masked and stay so. */
export function AdminSettings() {
  const [settings, setSettings] = useState<Setting[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<{ settings: Setting[] }>('admin/getSettings').then(
      (r) => setSettings(r.settings),
      (err) => setError(messageOf(err)),
    );
  }, []);
  return (
    <section class="admin-section" aria-labelledby="admin-settings">
      <h3 id="admin-settings">Server settings</h3>
      <p class="hint">Read-only: settings change in the environment or the environment file, and take effect when Parley restarts.</p>
      <Note error={error} />
      {settings && (
        <div class="admin-table-wrap" tabIndex={0} role="region" aria-label="Server settings table">
          <table class="admin-table admin-settings">
            <caption class="visually-hidden">Server settings</caption>
            <thead>
              <tr>
                <th scope="col">Setting</th>
                <th scope="col">Value</th>
                <th scope="col">From</th>
              </tr>
            </thead>
            <tbody>
              {settings.map((s) => (
                <tr key={s.key}>
                  <th scope="row">
                    <code>{s.env}</code>
                    <span class="hint admin-doc">{s.doc}</span>
                  </th>
                  <td>
                    <code>{s.value === '' ? '—' : s.value}</code>
                    {s.secret && <span class="visually-hidden"> (secret{s.value ? ', hidden' : ', not set'})</span>}
                  </td>
                  <td>{s.source === 'set' ? 'set' : 'default'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
