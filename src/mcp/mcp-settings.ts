import type { Store } from '../db/work';
import { readServerSetting, writeServerSetting } from '../connections/connection.store';

/**
 * The admin's runtime choices about MCP (a `server_settings` row): whether users may add their
 * own remote servers, and whether those may be on this machine or the LAN (off by default: a
 * user's server address is the user's input, and Parley's network is the admin's).
 */
export interface McpSettings {
  userServers: boolean;
  userServersAllowPrivate: boolean;
}

const KEY = 'mcp';
export const DEFAULT_MCP_SETTINGS: McpSettings = { userServers: false, userServersAllowPrivate: false };

export async function readMcpSettings(store: Store): Promise<McpSettings> {
  const saved = await store.read((tx) => readServerSetting<Partial<McpSettings>>(tx, KEY));
  return { ...DEFAULT_MCP_SETTINGS, ...saved };
}

export async function writeMcpSettings(store: Store, change: Partial<McpSettings>, now: number): Promise<McpSettings> {
  const next = { ...(await readMcpSettings(store)), ...Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) };
  await store.write((tx) => writeServerSetting(tx, KEY, next, now));
  return next;
}
