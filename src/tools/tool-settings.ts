import type { Tx, Work } from '../db/work';
import { readServerSetting, writeServerSetting } from '../connections/connection.store';
import type { Config } from '../config';
import type { ToolApproval, ToolSource } from './tool.types';

/**
 * The admin's switches for tools (docs/assistants.md, "Tools for admins"), one `server_settings`
 * row: per source, whether it is on, for which subscription tiers, and whether its tools ask
 * first; per tool, whether it asks first. Read by the registry on every turn (one row by key), so
 * a change reaches every instance at once.
 */
export interface SourceSettings {
  /** false: no turn gets its tools. Absent: the source's default (on, but the code interpreter's: src/code/code.tools.ts). */
  enabled?: boolean;
  /** The subscription tiers whose users get its tools; null or absent: every tier. */
  tiers?: string[] | null;
  /** 'ask': every tool of the source asks first. */
  approval?: ToolApproval;
}

export interface ToolSettings {
  sources: Record<string, SourceSettings>;
  /** By tool name: 'ask' or 'never', overriding the source's (an admin may exempt one tool of a source that asks). */
  tools: Record<string, { approval: ToolApproval }>;
}

export const TOOL_SETTINGS_KEY = 'tools';

export function* readToolSettings(tx: Tx): Work<ToolSettings> {
  const stored = yield* readServerSetting<Partial<ToolSettings>>(tx, TOOL_SETTINGS_KEY);
  return { sources: stored?.sources ?? {}, tools: stored?.tools ?? {} };
}

export function* writeToolSettings(tx: Tx, settings: ToolSettings, now: number): Work<void> {
  yield* writeServerSetting(tx, TOOL_SETTINGS_KEY, settings, now);
}

/** Whether the source is on: the admin's switch, else the source's default. */
export const sourceEnabled = (s: SourceSettings | undefined, source: ToolSource, config: Config): boolean => s?.enabled ?? source.enabledByDefault?.(config) ?? true;

/** Whether a user of `tier` may use the source at all. */
export const sourceAllowed = (s: SourceSettings | undefined, source: ToolSource, config: Config, tier: string): boolean =>
  sourceEnabled(s, source, config) && (!s?.tiers || s.tiers.includes(tier));

/** A tool asks first when the admin says so for it, else when its source (the admin's switch, or the source itself) says so. */
export function approvalOf(settings: ToolSettings, sourceId: string, name: string, offered: ToolApproval): ToolApproval {
  const own = settings.tools[name]?.approval;
  if (own) return own;
  return settings.sources[sourceId]?.approval === 'ask' || offered === 'ask' ? 'ask' : 'never';
}
