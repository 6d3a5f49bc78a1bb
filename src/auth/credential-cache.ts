import type { Db } from '../db/connection';
import type { Principal } from './authenticate';

/**
 * Credentials already resolved, so that an authenticated request does not look up its API key
 * and its user in SQLite every time: under load those two lookups cost more than the rest of a
 * simple read operation (bench/RESULTS.md, change 8).
 *
 * Correctness rests on two invalidations:
 * - in this process, every store function that changes a user, an API key or a session calls
 *   `forgetCredentials(userId)` (revocation, a changed user row): that user's entries are stale
 *   from then on, everyone else's stay (a preference saved by one member must not send every
 *   other request back to SQLite);
 * - other processes (the admin CLI revoking a key, locking a user) write through their own
 *   connection: SQLite's `PRAGMA data_version` changes when another connection commits, and
 *   any change clears the cache before the next lookup. The pragma runs at most once per
 *   `OTHER_WRITERS_CHECK_MS`: a request that starts later than that after another process's
 *   commit sees it (one pragma per request cost as much as a tenth of the throughput).
 * An entry also expires after `MAX_AGE_MS`, and a session entry at the session's own expiry.
 */
export interface CachedCredential {
  principal: Principal;
  /** When the entry was resolved from the database. */
  at: number;
  /** Sessions: their expiry; API keys: never. */
  expiresAt: number;
  /** The last-used stamp as stored, so that `authenticate` touches it as often as before. */
  lastUsedAt: number | null;
}

const MAX_ENTRIES = 10_000;
export const OTHER_WRITERS_CHECK_MS = 1;
const MAX_AGE_MS = 60_000;

interface Cache {
  entries: Map<string, Remembered>;
  dataVersion: () => number;
  lastVersion: number;
  /** `performance.now()` of the last pragma: a monotonic clock, whatever clock `now` is. */
  checkedAt: number;
}

interface Remembered extends CachedCredential {
  /** `changes` when the entry was resolved: a later change of its user makes it stale. */
  seen: number;
}

/**
 * Counts in-process changes; `changedAt` keeps, per user, the count of their last change (one
 * number per user changed since start). Module state rather than per connection: stores may be
 * handed a transaction, which is not the connection object the caches are keyed by.
 */
let changes = 0;
const changedAt = new Map<string, number>();

const caches = new WeakMap<Db, Cache>();

function cacheFor(db: Db): Cache {
  let cache = caches.get(db);
  if (!cache) {
    const stmt = db.$client.prepare<{ data_version: number }, []>('PRAGMA data_version');
    const dataVersion = () => stmt.get()!.data_version;
    cache = { entries: new Map(), dataVersion, lastVersion: dataVersion(), checkedAt: performance.now() };
    caches.set(db, cache);
  }
  return cache;
}

/** The entry for a credential hash, if still valid; clears the cache when another connection wrote. */
export function cachedCredential(db: Db, hash: string, now: number): CachedCredential | undefined {
  const cache = cacheFor(db);
  const t = performance.now();
  let version = cache.lastVersion;
  if (t - cache.checkedAt >= OTHER_WRITERS_CHECK_MS) {
    version = cache.dataVersion();
    cache.checkedAt = t;
  }
  if (version !== cache.lastVersion) {
    // Another connection wrote: which rows it changed is unknown, so everything goes.
    cache.lastVersion = version;
    cache.entries.clear();
    return undefined;
  }
  const entry = cache.entries.get(hash);
  if (!entry) return undefined;
  if (now - entry.at > MAX_AGE_MS || entry.expiresAt <= now || (changedAt.get(entry.principal.user.id) ?? 0) > entry.seen) {
    cache.entries.delete(hash);
    return undefined;
  }
  return entry;
}

/**
 * Remember a credential just resolved from the database. Resolving and remembering happen in one
 * synchronous run (bun:sqlite), so no change of this process can fall between them.
 */
export function rememberCredential(db: Db, hash: string, entry: CachedCredential): void {
  const { entries } = cacheFor(db);
  // Oldest first: Map keeps insertion order, so the first key is the least recently resolved.
  if (entries.size >= MAX_ENTRIES && !entries.has(hash)) entries.delete(entries.keys().next().value!);
  // In place: the caller may still update the entry it passed (its last-used stamp).
  (entry as Remembered).seen = ++changes;
  entries.set(hash, entry as Remembered);
}

/** Call after changing a user, or one of their API keys or sessions, in this process (any connection). */
export function forgetCredentials(userId: string): void {
  changedAt.set(userId, ++changes);
  for (const listener of changeListeners) listener(userId);
}

const changeListeners = new Set<(userId: string) => void>();

/**
 * Be told of every `forgetCredentials` call in this process (src/auth/credential-watch.ts ends the
 * open streams of a revoked credential with it). Returns the remover.
 */
export function onCredentialsChanged(listener: (userId: string) => void): () => void {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}
