import type { ConnectionRow } from '../db/schema';
import type { Check } from '../ops/checks';
import type { Connections } from './resolver';
import { probeConnection, type Probe } from './probe-connection';
import { maskUrl } from '../mask-secrets';

/** A health check waits longer than the catalogue: an admin asked, and a slow server is worth knowing. */
const HEALTH_TIMEOUT_MS = 4000;

export interface Health extends Probe {
  /** The models it lists (at most 50 shown). */
  models?: string[];
}

/** Reach a connection now (`admin/testConnection`, doctor): what the catalogue then uses too. */
export async function testConnection(connections: Connections, row: ConnectionRow): Promise<Health> {
  let probe: Probe;
  try {
    const { apiKey } = await connections.open(row);
    probe = await probeConnection(row, apiKey, HEALTH_TIMEOUT_MS);
  } catch (err) {
    probe = { reachable: false, latencyMs: 0, error: (err as Error).message };
  }
  connections.lists.put(row, probe);
  return { ...probe, ...(probe.models ? { models: probe.models.slice(0, 50) } : {}) };
}

/** What the admin pages show without asking: the last look the catalogue or a check took. */
export function lastHealth(connections: Connections, row: ConnectionRow): (Probe & { checkedAt: number }) | undefined {
  const entry = connections.lists.peek(row);
  return entry && { ...entry.probe, checkedAt: entry.at };
}

/** Doctor's lines: one a connection, its credential never shown. */
export async function connectionChecks(connections: Connections): Promise<Check[]> {
  const rows = await connections.rows();
  if (!rows.length)
    return [{ name: 'connections', status: 'skip', detail: 'none: chat and research answer with an error until an AI server is connected', fix: 'add one: `parley connection add` or the Admin page (docs/connections.md)' }];
  return Promise.all(
    rows.map(async (row): Promise<Check> => {
      const name = `connection ${row.name} (${row.kind})`;
      if (!row.enabled) return { name, status: 'skip', detail: 'disabled' };
      const h = await testConnection(connections, row);
      const where = `${maskUrl(row.baseUrl)}, ${h.latencyMs} ms`;
      // Unreachable or refusing: nothing it serves works. Up but odd (no model list): worth a look.
      if (h.error) return { name, status: h.reachable && !h.refused ? 'warn' : 'fail', detail: `${where}: ${h.error}`, fix: `check it: parley connection test ${row.name}` };
      const models = h.models ? `, ${h.models.length} model${h.models.length === 1 ? '' : 's'}` : '';
      return { name, status: 'ok', detail: `${where}${models}` };
    }),
  );
}

/** The address without user info, path or query: what an admin needs to recognise it. */
export function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(not a URL)';
  }
}
