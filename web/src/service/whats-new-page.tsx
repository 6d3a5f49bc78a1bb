import './service.css';
import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { Markdown } from '../shared/markdown-view';
import { SEEN_VERSION } from '../shell/status-banners';

interface Release {
  version: string;
  date: string;
  sections: { kind: string; items: string[] }[];
}
const KIND_WORDS: Record<string, string> = { added: 'New', changed: 'Changed', deprecated: 'Going away', removed: 'Removed', fixed: 'Fixed', security: 'Security' };

/** The release notes of this server's version and the ones before it (releaseNotes/list), newest first. */
export function WhatsNewPage() {
  const [notes, setNotes] = useState<{ currentVersion: string; releases: Release[] }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<{ currentVersion: string; releases: Release[] }>('releaseNotes/list', {}).then(
      (r) => (setNotes(r), localStorage.setItem(SEEN_VERSION, r.currentVersion)),
      () => setError('The release notes could not be loaded.'),
    );
  }, []);
  return (
    <section class="page whats-new" tabIndex={0} aria-labelledby="whats-new-title">
      <h2 id="whats-new-title">What's new</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {notes && <p class="hint">This server runs Parley {notes.currentVersion}.</p>}
      {notes?.releases.length === 0 && <p class="hint">No release notes.</p>}
      {notes?.releases.map((r) => (
        <article key={r.version} aria-labelledby={`release-${r.version}`}>
          <h3 id={`release-${r.version}`}>
            {r.version} <span class="hint">({r.date})</span>
          </h3>
          {r.sections.map((s) => (
            <section key={s.kind} aria-label={`${r.version}: ${KIND_WORDS[s.kind] ?? s.kind}`}>
              <h4>{KIND_WORDS[s.kind] ?? s.kind}</h4>
              <ul>
                {s.items.map((item, i) => (
                  <li key={i}>
                    <Markdown text={item} class="inline" />
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </article>
      ))}
    </section>
  );
}
