import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { CopyField, useOutcome, when } from './settings-shared';

interface Grant {
  grantId: string;
  clientName: string;
  clientUri: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/**
 * Using Parley from an editor or a desktop agent (docs/mcp-server.md): the `/mcp` address to give
 * it, how it signs in (OAuth, or an API key from the section above), and the applications the
 * user allowed, each of which can be disconnected at once.
 */
export function OtherAppsSection() {
  const [grants, setGrants] = useState<Grant[]>();
  const outcome = useOutcome();
  const address = `${location.origin}/mcp`;
  const load = () => call<{ grants: Grant[] }>('mcpAccess/listGrants').then((r) => setGrants(r.grants), (err) => outcome.failed(err, 'Loading your connected applications'));
  useEffect(() => void load(), []);

  const disconnect = async (g: Grant) => {
    if (!confirm(`Disconnect "${g.clientName}"? It stops working with Parley at once.`)) return;
    outcome.clear();
    try {
      await call('mcpAccess/revokeGrant', { grantId: g.grantId });
      outcome.done(`"${g.clientName}" was disconnected.`);
      await load();
    } catch (err) {
      outcome.failed(err, 'Disconnecting the application');
    }
  };

  return (
    <section class="settings-section" aria-labelledby="other-apps-title">
      <h3 id="other-apps-title">Use Parley from other apps (MCP)</h3>
      <p class="hint">
        Editors and desktop agents that speak MCP can use Parley's deep research, search your files and conversations, and your memories. Add a remote (HTTP)
        MCP server with this address:
      </p>
      <CopyField id="mcp-address" label="Address of Parley's MCP server" value={address} copyLabel="Copy the MCP address" />
      <p class="hint">
        An application that signs in by itself (OAuth) sends you to Parley to allow it. Others take an API key (above) as a header:{' '}
        <code>Authorization: Bearer pk_…</code>.
      </p>
      {outcome.view}
      {grants && grants.length === 0 && <p class="hint">No application is connected with OAuth.</p>}
      {grants && grants.length > 0 && (
        <ul class="settings-list">
          {grants.map((g) => (
            <li key={g.grantId}>
              <div>
                <strong>{g.clientName}</strong>
                {g.clientUri && <span class="hint"> {g.clientUri}</span>}
              </div>
              <div class="hint">
                Allowed {when(g.createdAt)} · {g.lastUsedAt ? `last used ${when(g.lastUsedAt)}` : 'never used'}
              </div>
              <button type="button" onClick={() => void disconnect(g)}>
                Disconnect
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
