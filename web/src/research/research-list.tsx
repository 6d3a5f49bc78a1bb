import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { onLinkClick } from '../shared/router';

interface ResearchConversation {
  id: string;
  title: string;
  updatedAt: string;
  lastResponse: { id: string; kind: 'chat' | 'research'; status: string } | null;
}

const STATE_WORDS: Record<string, string> = { queued: 'Running', in_progress: 'Running', completed: 'Finished', failed: 'Failed', cancelled: 'Stopped' };
export const stateOf = (status: string | undefined) => (status ? (STATE_WORDS[status] ?? status) : 'Not started');
const running = (c: ResearchConversation) => c.lastResponse?.status === 'queued' || c.lastResponse?.status === 'in_progress';
/** How often the list asks again while a run in it is going: its state changes on the server alone. */
const POLL_MS = 3000;

/** The user's research runs, newest first, each with its state; kept fresh while any runs. */
export function ResearchList() {
  const [runs, setRuns] = useState<ResearchConversation[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let live = true;
    const load = () =>
      call<{ conversations: ResearchConversation[] }>('chat/listConversations', { kind: 'research', limit: 100 })
        .then((r) => {
          if (!live) return;
          setRuns(r.conversations);
          setError(undefined);
          if (r.conversations.some(running)) timer = setTimeout(load, POLL_MS);
        })
        .catch((err: Error) => live && setError(`Your research could not be listed: ${err.message}`));
    load();
    return () => ((live = false), clearTimeout(timer));
  }, []);

  return (
    <section class="research-list" aria-labelledby="research-list-title">
      <h3 id="research-list-title">Your research</h3>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {runs === undefined && !error && <p class="hint">Loading…</p>}
      {runs?.length === 0 && <p class="hint">No research yet.</p>}
      {runs && runs.length > 0 && (
        <ul>
          {runs.map((c) => (
            <li key={c.id}>
              <a href={`/research/${c.id}`} onClick={onLinkClick(`/research/${c.id}`)}>
                {c.title || 'Untitled research'}
              </a>
              <span class={`run-state ${c.lastResponse?.status ?? 'none'}`}>{stateOf(c.lastResponse?.status)}</span>
              <time class="hint" dateTime={c.updatedAt}>
                {new Date(c.updatedAt).toLocaleString()}
              </time>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
