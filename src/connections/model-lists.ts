import type { ConnectionRow } from '../db/schema';
import { probeConnection, type Probe } from './probe-connection';

/**
 * Each connection's model list, asked with a short timeout and kept: a minute when it answered,
 * 15 seconds when it did not. Past that the old answer is still given at once while a new one is
 * asked in the background, so a dead connection costs the catalogue its timeout once, never again
 * (bench/RESULTS.md, "Connections"). Keyed by row version: an edited connection is asked anew.
 */
const FRESH_MS = 60_000;
const FAILED_FRESH_MS = 15_000;
/** How long the catalogue waits for a list it has never had. */
export const LIST_TIMEOUT_MS = 2500;

export interface ModelListEntry {
  probe: Probe;
  at: number;
}

export interface ModelLists {
  /** The connection's last answer (asked now when there is none, or refreshed behind it when old). */
  get(row: ConnectionRow, apiKey: () => Promise<string | undefined>): Promise<ModelListEntry>;
  /** The last answer, without asking. */
  peek(row: ConnectionRow): ModelListEntry | undefined;
  /** Record a fresh probe (a health check's). */
  put(row: ConnectionRow, probe: Probe): void;
}

export function createModelLists(now: () => number): ModelLists {
  const cache = new Map<string, { version: number; entry?: ModelListEntry; asking?: Promise<ModelListEntry> }>();
  const slot = (row: ConnectionRow) => {
    let s = cache.get(row.id);
    if (!s || s.version !== row.version) cache.set(row.id, (s = { version: row.version }));
    return s;
  };
  const ask = (row: ConnectionRow, apiKey: () => Promise<string | undefined>) => {
    const s = slot(row);
    s.asking ??= (async () => {
      const probe = await apiKey().then(
        (key) => probeConnection(row, key, LIST_TIMEOUT_MS),
        (err: Error) => ({ reachable: false, latencyMs: 0, error: err.message }),
      );
      const entry = { probe, at: now() };
      if (slot(row) === s) s.entry = entry;
      s.asking = undefined;
      return entry;
    })();
    return s.asking;
  };
  return {
    async get(row, apiKey) {
      const s = slot(row);
      if (!s.entry) return ask(row, apiKey);
      const ttl = s.entry.probe.error ? FAILED_FRESH_MS : FRESH_MS;
      if (now() - s.entry.at >= ttl) void ask(row, apiKey);
      return s.entry;
    },
    peek: (row) => slot(row).entry,
    put(row, probe) {
      slot(row).entry = { probe, at: now() };
    },
  };
}
