import type { AppDeps } from '../deps';
import { DAY_MS, HOUR_MS } from '../time';
import { pruneResponseEvents } from '../chat/response.store';
import { pruneGroupEvents } from '../groups/group-events.store';
import { pruneEndedSessions } from '../auth/auth.store';
import { pruneLoginLinks } from '../auth/login-link.store';
import { pruneSetupTokens } from '../setup/setup.store';
import { pruneOAuth } from '../mcp-server/oauth/oauth.store';
import { releaseLease, tryAcquireLease } from './lease.store';
import { sweepBlobs } from '../files/sweep-blobs';
import { pruneApiResponses } from '../openai-compat/api-response.store';
import { pruneUsage } from '../usage/usage.store';

/** The lease that makes one instance of a cluster run retention each period (src/tasks/lease.store.ts). */
export const RETENTION_LEASE = 'retention';

type PruneDeps = Pick<AppDeps, 'db' | 'store' | 'instanceId' | 'config' | 'log' | 'now'> & Partial<Pick<AppDeps, 'files'>>;

/** The daily sums of usage stay at least this long, whatever the retention of calls: allowances of a month read them. */
const USAGE_DAYS_KEEP = 62;

/** Ended sessions stay this long (an admin looking into a recent sign-out finds it), then go. */
const ENDED_SESSION_KEEP_DAYS = 30;

/**
 * What retention drops, each part on its own so one failing does not keep the others:
 * - the stored events of responses finished more than
 *   PARLEY_EVENT_RETENTION_DAYS ago; the answers themselves stay in their conversations;
 * - the `/v1` door's responses kept in no conversation, PARLEY_V1_RESPONSE_RETENTION_HOURS after
 *   they ended (docs/openai-api.md);
 * - sessions that ended (expired or signed out) more than ENDED_SESSION_KEEP_DAYS ago;
 * - group events older than PARLEY_GROUP_EVENT_RETENTION_DAYS, and invites past their expiry;
 * - login links and setup links used or expired more than a day ago (a day, so "this link was
 *   already used" can still be told apart from "unknown" the morning after);
 * - the stored bytes of files no longer there (src/files/sweep-blobs.ts);
 * - usage: calls recorded more than PARLEY_USAGE_RETENTION_DAYS ago (0: never), the daily sums
 *   after at least USAGE_DAYS_KEEP days (a month's allowance reads them), lapsed reservations.
 */
const parts: { name: string; run(deps: PruneDeps, now: number): Record<string, number> | Promise<Record<string, number>> }[] = [
  { name: 'response events', run: async (d, now) => ({ events: await d.store.write((tx) => pruneResponseEvents(tx, now - d.config.eventRetentionDays * DAY_MS)) }) },
  {
    name: 'v1 responses',
    run: (d, now) => d.store.write((tx) => pruneApiResponses(tx, now - d.config.v1ResponseRetentionHours * HOUR_MS, now - d.config.eventRetentionDays * DAY_MS)),
  },
  { name: 'sessions', run: async (d, now) => ({ sessions: await d.store.read((tx) => pruneEndedSessions(tx, now - ENDED_SESSION_KEEP_DAYS * DAY_MS)) }) },
  { name: 'group events', run: (d, now) => d.store.read((tx) => pruneGroupEvents(tx, d.config.groupEventRetentionDays, now)) },
  { name: 'login links', run: async (d, now) => ({ loginLinks: await d.store.read((tx) => pruneLoginLinks(tx, now - DAY_MS)) }) },
  { name: 'setup links', run: async (d, now) => ({ setupLinks: await d.store.read((tx) => pruneSetupTokens(tx, now - DAY_MS)) }) },
  // MCP clients' expired codes and tokens, grants revoked a month ago, registrations never used after a day.
  { name: 'mcp oauth', run: async (d, now) => ({ mcpOAuth: await d.store.write((tx) => pruneOAuth(tx, now, DAY_MS, 30 * DAY_MS)) }) },
  {
    name: 'usage',
    run: (d, now) => {
      const days = d.config.usageRetentionDays;
      return d.store.write((tx) => pruneUsage(tx, now, days ? now - days * DAY_MS : 0, days ? now - Math.max(days, USAGE_DAYS_KEEP) * DAY_MS : 0));
    },
  },
  // Bytes of files gone with their user (a cascade), or missed by the sweep after a deletion.
  { name: 'file blobs', run: async (d) => ({ blobs: d.files ? await sweepBlobs({ ...d, files: d.files }) : 0 }) },
];

/** One pass over everything retention drops; logs what went and what failed. */
export async function pruneExpired(deps: PruneDeps): Promise<void> {
  const now = deps.now();
  for (const part of parts) {
    try {
      const counts = await part.run(deps, now);
      if (Object.values(counts).some((n) => n > 0)) deps.log.info(`pruned ${part.name}`, counts);
    } catch (err) {
      deps.log.error(`pruning ${part.name} failed`, { cause: err instanceof Error ? err.message : String(err) });
    }
  }
}

/**
 * One period's pass, by one instance of a cluster: the instance that takes the retention lease
 * for most of the period (0.9 of it) prunes, the others skip. Renewed by its holder each period,
 * so one instance keeps the work while it lives; another takes it over within a period of its
 * death. Returns whether this instance pruned.
 */
export async function pruneIfLeader(deps: PruneDeps, everyMs: number): Promise<boolean> {
  let held;
  try {
    held = await deps.store.write((tx) => tryAcquireLease(tx, RETENTION_LEASE, deps.instanceId, Math.max(1, Math.floor(everyMs * 0.9)), deps.now()));
  } catch (err) {
    deps.log.error('retention lease failed', { cause: err instanceof Error ? err.message : String(err) });
    return false;
  }
  if (!held) return false;
  await pruneExpired(deps);
  return true;
}

/**
 * Prune once soon after start and then hourly; returns the stop function, which also gives the
 * lease up so a restarted or another instance prunes at its next pass. The first pass waits for
 * the next turn of the event loop, so a backlog (a server down for weeks, a shorter retention)
 * is deleted after the server listens rather than holding up its start.
 */
export function startPruning(deps: PruneDeps, everyMs = HOUR_MS): () => void {
  const first = setTimeout(() => void pruneIfLeader(deps, everyMs), 0);
  const timer = setInterval(() => void pruneIfLeader(deps, everyMs), everyMs);
  timer.unref?.();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
    // On SQLite this runs now, before the database closes; a failure only delays the next pass.
    deps.store.write((tx) => releaseLease(tx, RETENTION_LEASE, deps.instanceId)).catch(() => undefined);
  };
}
