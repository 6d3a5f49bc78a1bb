import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import { McpServerForm, testLine, type McpServer, type McpTest } from '../admin/admin-mcp';

type Outcome = { error?: string; done?: string };

/** What the sign-in's way back (`/api/mcp/oauth/callback` → `/settings?mcp=…`) said. */
function returnedFromSignIn(): Outcome {
  const p = new URLSearchParams(location.search);
  if (p.get('mcp') === 'connected') return { done: `Connected to ${p.get('server') ?? 'the server'}.` };
  if (p.get('mcp') === 'error') return { error: p.get('message') ?? 'The sign-in did not complete.' };
  return {};
}

/** Settings → MCP servers: the servers whose tools the assistant may use for you, Connect for those that want a sign-in, your own when allowed. */
export function McpSection() {
  const [servers, setServers] = useState<McpServer[]>();
  const [own, setOwn] = useState(false);
  const [note, setNote] = useState<Outcome>(returnedFromSignIn);
  const failed = (err: unknown) => setNote({ error: messageOf(err) });
  const load = () =>
    call<{ servers: McpServer[]; userServers: boolean }>('mcp/listServers').then((r) => {
      setServers(r.servers);
      setOwn(r.userServers);
    }, failed);
  useEffect(() => void load(), []);
  const connect = (s: McpServer) => call<{ authorizationUrl: string }>('mcp/connectServer', { id: s.id }).then((r) => location.assign(r.authorizationUrl), failed);
  const disconnect = (s: McpServer) => call('mcp/disconnectServer', { id: s.id }).then(() => (setNote({ done: `Disconnected from ${s.name}.` }), load()), failed);
  const test = (s: McpServer) => call<McpTest>('mcp/testServer', { id: s.id }).then((t) => (t.ok ? setNote({ done: testLine(s.name, t) }) : setNote({ error: testLine(s.name, t) })), failed);
  // One's own server: on or off, asking first or not (mcp/updateServer); the admin's are the admin's to change.
  const update = (s: McpServer, change: { enabled?: boolean; approval?: 'ask' | 'never' }, done: string) =>
    call('mcp/updateServer', { id: s.id, ...change }).then(() => (setNote({ done }), load()), failed);
  const remove = (s: McpServer) => confirm(`Remove ${s.name}?`) && call('mcp/removeServer', { id: s.id }).then(load, failed);
  const add = (input: Record<string, unknown>) =>
    call<{ server: McpServer }>('mcp/addServer', input).then(
      (r) => (setNote({ done: `Added ${r.server.name}.` }), void load(), true),
      (err) => (failed(err), false),
    );
  if (servers && servers.length === 0 && !own) return null;
  return (
    <section class="settings-section" aria-labelledby="settings-mcp">
      <h3 id="settings-mcp">MCP servers</h3>
      <p class="hint">Tools the assistant may use for you. A server that asks you to sign in offers its tools once you connect it.</p>
      {servers && servers.length > 0 && (
        <ul class="settings-list" aria-label="MCP servers">
          {servers.map((s) => (
            <li key={s.id}>
              <span>
                <strong>{s.name}</strong> <span class="hint">{s.shared ? 'offered by the admin' : s.url}</span>
                {!s.shared && !s.enabled && <span class="hint"> · off</span>}
                {s.auth === 'oauth' && <span class="hint"> · {s.connected ? 'connected' : 'not connected'}</span>}
              </span>
              {s.auth === 'oauth' &&
                (s.connected ? (
                  <button type="button" onClick={() => disconnect(s)} aria-label={`Disconnect ${s.name}`}>
                    Disconnect
                  </button>
                ) : (
                  <button type="button" onClick={() => connect(s)} aria-label={`Connect ${s.name}`}>
                    Connect
                  </button>
                ))}
              <button type="button" onClick={() => test(s)} aria-label={`Test ${s.name}`}>
                Test
              </button>
              {!s.shared && (
                <>
                  <label class="check">
                    <input type="checkbox" aria-label={`${s.name} on`} checked={s.enabled} onChange={(e) => update(s, { enabled: e.currentTarget.checked }, `${s.name} is ${e.currentTarget.checked ? 'on' : 'off'} now.`)} /> On
                  </label>
                  <label class="check">
                    <input
                      type="checkbox"
                      aria-label={`Ask before ${s.name}'s tools`}
                      checked={s.approval === 'ask'}
                      onChange={(e) => update(s, { approval: e.currentTarget.checked ? 'ask' : 'never' }, `${s.name}'s tools ${e.currentTarget.checked ? 'ask first' : 'run without asking'} now.`)}
                    />{' '}
                    Ask first
                  </label>
                  <button type="button" onClick={() => remove(s)} aria-label={`Remove ${s.name}`}>
                    Remove
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {own && <McpServerForm onAdd={add} label="Add your own MCP server" />}
      <Note {...note} />
    </section>
  );
}
