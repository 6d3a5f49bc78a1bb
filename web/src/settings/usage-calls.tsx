import { useEffect, useState } from 'preact/hooks';
import { call, type ApiKey } from '../shared/api';
import { messageOf, Note } from '../shared/note';

/** One model call as `usage/listCalls` answers it (docs/usage.md). */
interface UsageCall {
  id: string;
  createdAt: string;
  kind: string;
  model: string;
  apiKeyId: string | null;
  responseId: string | null;
  assistantId: string | null;
  inputTokens: number;
  outputTokens: number;
  units: number;
  estimated: boolean;
  credits: number;
}
interface Page {
  calls: UsageCall[];
  nextBefore: string | null;
}

const PAGE = 20;
const n = (x: number) => x.toLocaleString();
const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * The user's model calls one by one, newest first (`usage/listCalls`): what the report above sums,
 * so a surprising total can be traced to the call, the key and the assistant that made it. Names
 * for keys and assistants come from their own lists; an assistant
 * removed since (or no longer shared with the user) shows as "no longer available".
 */
export function UsageCalls() {
  const [calls, setCalls] = useState<UsageCall[]>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string>();
  const [names, setNames] = useState<Record<string, string>>({});
  const load = (before?: string) =>
    call<Page>('usage/listCalls', before ? { before, limit: PAGE } : { limit: PAGE }).then(
      (page) => {
        setCalls((had) => [...(before ? (had ?? []) : []), ...page.calls]);
        setNext(page.nextBefore);
        setError(undefined);
      },
      (err) => setError(messageOf(err)),
    );
  useEffect(() => {
    load();
    // Labels only: a list that fails to load leaves ids unnamed, not the table empty.
    call<{ keys: ApiKey[] }>('auth/listApiKeys').then((r) => setNames((m) => ({ ...m, ...Object.fromEntries(r.keys.map((k) => [k.keyId, k.name])) })), () => {});
    call<{ assistants: { id: string; name: string }[] }>('assistants/list').then((r) => setNames((m) => ({ ...m, ...Object.fromEntries(r.assistants.map((a) => [a.id, a.name])) })), () => {});
  }, []);
  const nameOf = (id: string | null, none: string) => (id === null ? none : (names[id] ?? 'no longer available'));
  return (
    <details class="usage-calls">
      <summary>Each call</summary>
      <Note error={error} />
      {calls && !calls.length && <p class="hint">No model calls yet.</p>}
      {calls && calls.length > 0 && (
        <div class="usage-table-wrap" tabIndex={0} role="region" aria-label="Each call">
          <table class="usage-table usage-calls-table">
            <caption class="visually-hidden">Your model calls, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col">Model</th>
                <th scope="col">Assistant</th>
                <th scope="col">API key</th>
                <th scope="col">Input tokens</th>
                <th scope="col">Output tokens</th>
                <th scope="col">Units</th>
                <th scope="col">Credits</th>
              </tr>
            </thead>
            <tbody>
              {calls.map((c) => (
                <tr key={c.id}>
                  <th scope="row">{when(c.createdAt)}</th>
                  <td>{c.kind}</td>
                  <td>{c.model}</td>
                  <td>{nameOf(c.assistantId, '—')}</td>
                  <td>{nameOf(c.apiKeyId, 'no key')}</td>
                  <td>
                    {n(c.inputTokens)}
                    {c.estimated && <span class="hint"> (estimated)</span>}
                  </td>
                  <td>{n(c.outputTokens)}</td>
                  <td>{n(c.units)}</td>
                  <td>{n(c.credits)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" onClick={() => load(next)}>
          Older calls
        </button>
      )}
    </details>
  );
}
