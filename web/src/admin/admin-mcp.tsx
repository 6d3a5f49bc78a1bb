import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';

/** What `admin/listMcpServers` and `mcp/listServers` say of a server (docs/mcp.md). */
export interface McpServer {
  id: string;
  name: string;
  transport: 'http' | 'stdio';
  url: string | null;
  command: string[] | null;
  headerNames: string[];
  auth: 'none' | 'oauth';
  approval: 'never' | 'ask';
  enabled: boolean;
  shared: boolean;
  health: { ok: boolean; error: string | null; protocolVersion: string | null; transport: string | null; tools: number | null } | null;
  breakerOpenUntil: string | null;
  connected?: boolean;
}

export interface McpTest {
  ok: boolean;
  latencyMs: number;
  error: string | null;
  needsSignIn: boolean;
  protocolVersion: string | null;
  transport: string | null;
  tools: { name: string; description: string }[];
}

type Outcome = { error?: string; done?: string };

/** A test's answer in words. */
export const testLine = (name: string, t: McpTest) =>
  t.ok
    ? `${name}: ${t.transport}, protocol ${t.protocolVersion}, ${t.latencyMs} ms, ${t.tools.length} tools (${t.tools.map((x) => x.name).join(', ')}).`
    : `${name}: ${t.error}`;

/** The form both pages use to add a remote server: name, address, one optional header, sign-in. */
export function McpServerForm({ onAdd, label }: { onAdd: (input: Record<string, unknown>) => Promise<boolean>; label: string }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [header, setHeader] = useState('');
  const [value, setValue] = useState('');
  const [auth, setAuth] = useState<'none' | 'oauth'>('none');
  const [approval, setApproval] = useState<'never' | 'ask'>('never');
  const submit = async (e: Event) => {
    e.preventDefault();
    // A refused server keeps what was typed, to be corrected rather than typed again.
    if (!(await onAdd({ name, url, auth, approval, ...(header && value ? { headers: { [header]: value } } : {}) }))) return;
    setName('');
    setUrl('');
    setValue('');
  };
  return (
    <form class="admin-form" onSubmit={submit} aria-label={label}>
      <div class="admin-fields">
        <label>
          Name
          <input required pattern="[a-z0-9][a-z0-9-]{0,29}" maxLength={30} value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="docs" />
        </label>
        <label>
          Address
          <input required type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://mcp.example.com/mcp" />
        </label>
        <label>
          Header (optional)
          <input value={header} onInput={(e) => setHeader(e.currentTarget.value)} placeholder="Authorization" />
        </label>
        <label>
          Its value
          <input type="password" autoComplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </label>
        <label>
          Sign-in
          <select value={auth} onChange={(e) => setAuth(e.currentTarget.value as 'none' | 'oauth')}>
            <option value="none">None (or the header)</option>
            <option value="oauth">Each user signs in (OAuth)</option>
          </select>
        </label>
        <label>
          Calls
          <select value={approval} onChange={(e) => setApproval(e.currentTarget.value as 'never' | 'ask')}>
            <option value="never">Run at once</option>
            <option value="ask">Ask first</option>
          </select>
        </label>
      </div>
      <button type="submit">Add</button>
    </form>
  );
}

/** Admin → MCP servers: the admin's servers, tested, switched, removed; whether users may add their own. */
export function AdminMcp() {
  const [servers, setServers] = useState<McpServer[]>();
  const [settings, setSettings] = useState<{ userServers: boolean; userServersAllowPrivate: boolean }>();
  const [note, setNote] = useState<Outcome>({});
  const failed = (err: unknown) => setNote({ error: messageOf(err) });
  const load = () =>
    call<{ servers: McpServer[]; settings: typeof settings }>('admin/listMcpServers').then((r) => {
      setServers(r.servers);
      setSettings(r.settings);
    }, failed);
  useEffect(() => void load(), []);
  const add = (input: Record<string, unknown>) =>
    call<{ server: McpServer }>('admin/addMcpServer', input).then(
      (r) => (setNote({ done: `Added ${r.server.name}.` }), void load(), true),
      (err) => (failed(err), false),
    );
  const test = (s: McpServer) => call<McpTest>('admin/testMcpServer', { id: s.id }).then((t) => (t.ok ? setNote({ done: testLine(s.name, t) }) : setNote({ error: testLine(s.name, t) }), load()), failed);
  const toggle = (s: McpServer) => call('admin/updateMcpServer', { id: s.id, enabled: !s.enabled }).then(load, failed);
  const remove = (s: McpServer) => confirm(`Remove ${s.name}, and every user's sign-in to it?`) && call('admin/removeMcpServer', { id: s.id }).then(load, failed);
  const setting = (change: Record<string, boolean>) => call<{ settings: typeof settings }>('admin/setMcpSettings', change).then((r) => setSettings(r.settings), failed);
  return (
    <section class="admin-section" aria-labelledby="admin-mcp">
      <h3 id="admin-mcp">MCP servers</h3>
      <p class="hint">
        Tools the model may call for every user. A stdio server (a program on this machine) is added with <code>parley mcp add NAME --command …</code> on the
        server itself.
      </p>
      {servers?.length === 0 && <p class="hint">No MCP servers.</p>}
      {servers && servers.length > 0 && (
        <ul class="admin-list" aria-label="MCP servers">
          {servers.map((s) => (
            <li key={s.id}>
              <span>
                <strong>{s.name}</strong> <span class="hint">{s.url ?? s.command?.join(' ')}</span>{' '}
                <span class="hint">
                  · {s.enabled ? 'on' : 'off'}
                  {s.auth === 'oauth' ? ' · users sign in' : ''}
                  {s.approval === 'ask' ? ' · ask first' : ''}
                  {s.health ? (s.health.ok ? ` · ${s.health.tools} tools, ${s.health.protocolVersion}` : ` · ${s.health.error}`) : ''}
                  {s.breakerOpenUntil ? ' · failing, left alone for now' : ''}
                </span>
              </span>
              <button type="button" onClick={() => test(s)} aria-label={`Test ${s.name}`}>
                Test
              </button>
              <button type="button" onClick={() => toggle(s)} aria-label={`${s.enabled ? 'Switch off' : 'Switch on'} ${s.name}`}>
                {s.enabled ? 'Switch off' : 'Switch on'}
              </button>
              <button type="button" onClick={() => remove(s)} aria-label={`Remove ${s.name}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <McpServerForm onAdd={add} label="Add an MCP server" />
      {settings && (
        <fieldset class="admin-fields">
          <legend>Users' own servers</legend>
          <label>
            <input type="checkbox" checked={settings.userServers} onChange={(e) => setting({ userServers: e.currentTarget.checked })} /> Users may add their own remote
            servers
          </label>
          <label>
            <input type="checkbox" checked={settings.userServersAllowPrivate} onChange={(e) => setting({ userServersAllowPrivate: e.currentTarget.checked })} /> …on this
            machine or the LAN too
          </label>
        </fieldset>
      )}
      <Note {...note} />
    </section>
  );
}
