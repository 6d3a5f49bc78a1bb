import './service.css';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';

export interface MiniApp {
  id: string;
  name: string;
  url: string;
  iconUrl: string | null;
  description: string | null;
}

/**
 * The mini apps the server's admins offer (miniApps/list), as a launcher. An app opens in a tab
 * of its own: it is another site, which the page's policy rightly keeps out of its frames, and
 * `noopener` gives it no handle on Parley's page. Icons are shown only from Parley's own origin
 * (the policy's `img-src`); other apps get their initial.
 */
export function AppsPage() {
  const [apps, setApps] = useState<MiniApp[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<{ apps: MiniApp[] }>('miniApps/list').then(
      (r) => setApps(r.apps),
      (err) => setError(err instanceof ApiError ? err.message : 'The apps could not be listed.'),
    );
  }, []);
  return (
    <section class="page apps" aria-labelledby="apps-title">
      <h2 id="apps-title">Apps</h2>
      <p class="hint">Small web apps your server's admins offer. Each opens in a new tab.</p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {apps?.length === 0 && <p class="hint">No apps yet.</p>}
      {apps && apps.length > 0 && (
        <ul class="app-grid">
          {apps.map((a) => (
            <li key={a.id}>
              <a href={a.url} target="_blank" rel="noopener noreferrer" class="app-tile">
                <span class="app-icon" aria-hidden="true">
                  {a.iconUrl?.startsWith(location.origin) ? <img src={a.iconUrl} alt="" /> : a.name.slice(0, 1).toUpperCase()}
                </span>
                <span class="app-name">{a.name}</span>
                {a.description && <span class="hint app-description">{a.description}</span>}
              </a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
