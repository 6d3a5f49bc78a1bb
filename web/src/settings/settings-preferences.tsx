import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { useOutcome } from './settings-shared';

type Preferences = Record<string, boolean>;

/** The words for each preference; a field the API adds later still shows, under its own name. */
const LABELS: Record<string, { label: string; hint: string }> = {
  enableMemories: {
    label: 'Remember things across conversations',
    hint: 'The assistant keeps facts you tell it (your diet, your language, your projects) and uses them in later chats and research. See and change them under Memories. Turned off, it neither reads nor saves any; those kept stay until you delete them.',
  },
  showMemoryToolOutput: {
    label: 'Show when memories are saved or changed',
    hint: 'Answers show a note each time the assistant saves, changes or forgets a memory.',
  },
};

/** The user's preferences (`preferences/get`), each a switch saved as soon as it changes. */
export function PreferencesSection() {
  const [prefs, setPrefs] = useState<Preferences>();
  const outcome = useOutcome();
  useEffect(() => {
    call<Preferences>('preferences/get').then(setPrefs, (err) => outcome.failed(err, 'Loading your preferences'));
  }, []);

  const change = async (field: string, value: boolean) => {
    const before = prefs![field] ?? !value;
    // Shown at once; put back if the server refuses, so the switch never lies about what is stored.
    // Only this field, from this answer: two switches flipped quickly must not undo each other
    // whichever answer comes back last.
    const set = (v: boolean) => setPrefs((p) => ({ ...p!, [field]: v }));
    set(value);
    outcome.clear();
    try {
      set((await call<Preferences>('preferences/update', { [field]: value }))[field] ?? value);
      outcome.done('Saved');
    } catch (err) {
      set(before);
      outcome.failed(err, 'Saving the preference');
    }
  };

  return (
    <section class="settings-section" aria-labelledby="preferences-title">
      <h3 id="preferences-title">Preferences</h3>
      {prefs && (
        <ul class="switches">
          {Object.entries(prefs)
            .filter(([, v]) => typeof v === 'boolean')
            .map(([field, value]) => (
              <li key={field}>
                <input
                  type="checkbox"
                  id={`pref-${field}`}
                  checked={value}
                  aria-describedby={LABELS[field] ? `pref-${field}-hint` : undefined}
                  onChange={(e) => change(field, e.currentTarget.checked)}
                />
                <label for={`pref-${field}`}>{LABELS[field]?.label ?? field}</label>
                {LABELS[field] && (
                  <p id={`pref-${field}-hint`} class="hint">
                    {LABELS[field].hint}
                  </p>
                )}
              </li>
            ))}
        </ul>
      )}
      {outcome.view}
    </section>
  );
}
