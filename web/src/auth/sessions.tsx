import { useEffect, useState } from 'preact/hooks';
import { call, SIGNED_OUT } from '../shared/api';

interface Session {
  sessionId: string;
  createdAt: string;
  lastUsedAt: string;
  userAgent: string | null;
  current: boolean;
}

const when = (iso: string) => new Date(iso).toLocaleString();

/** A browser's user agent as a person reads it: the browser and the system, roughly. */
function deviceOf(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = /(Firefox|Edg|Chrome|Chromium|Safari)\/[\d.]+/.exec(userAgent)?.[1]?.replace('Edg', 'Edge') ?? userAgent.split(' ')[0];
  const system = /(Android|iPhone|iPad|Windows|Mac OS X|Linux|CrOS)/.exec(userAgent)?.[1]?.replace('Mac OS X', 'macOS') ?? '';
  return system ? `${browser} on ${system}` : browser ?? 'Unknown device';
}

/** Where the user is signed in (`auth/listSessions`), and a way to end any of those sessions. */
export function Sessions() {
  const [sessions, setSessions] = useState<Session[]>();
  const [error, setError] = useState<string>();
  const load = () =>
    call<{ sessions: Session[] }>('auth/listSessions').then(
      (r) => setSessions(r.sessions),
      () => setError('The sessions could not be loaded.'),
    );
  useEffect(() => void load(), []);

  const end = async (s: Session) => {
    await call('auth/revokeSession', { sessionId: s.sessionId }).catch(() => undefined);
    // Ending this browser's own session signs it out.
    if (s.current) dispatchEvent(new Event(SIGNED_OUT));
    else await load();
  };

  return (
    <section class="sessions" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p class="hint">Where you are signed in. End a session you do not recognise, or one on a device you no longer use.</p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {sessions && (
        <ul class="session-list">
          {sessions.map((s) => (
            <li key={s.sessionId}>
              <div>
                <strong>{deviceOf(s.userAgent)}</strong>
                {s.current && <span class="badge"> (this browser)</span>}
              </div>
              <div class="hint">
                Signed in {when(s.createdAt)} · last used {when(s.lastUsedAt)}
              </div>
              <button type="button" aria-label={s.current ? 'End this session (sign out)' : `End the session of ${deviceOf(s.userAgent)}, last used ${when(s.lastUsedAt)}`} onClick={() => end(s)}>
                End
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
