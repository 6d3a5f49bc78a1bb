import type { Store } from '../db/work';
import type { Principal } from './authenticate';

/**
 * Credentials already resolved, so that an authenticated request does not look up its API key
 * and its user in the database every time: under load those two lookups cost more than the rest
 * of a simple read operation (bench/RESULTS.md, change 8). One cache per store.
 *
 * Correctness rests on these invalidations:
 * - in this process, every store function that changes a user, an API key or a session calls
 *   `forgetCredentials(userId)` once its change has committed (revocation, a changed user row):
 *   that user's entries are stale from then on, everyone else's stay (a preference saved by one
 *   member must not send every other request back to the database);
 * - other processes (the admin CLI revoking a key, locking a user) write through their own
 *   connection. On SQLite, `PRAGMA data_version` (`Store.dataVersion`) changes when another
 *   connection commits, and any change clears the cache before the next lookup. It is read at
 *   most once per `OTHER_WRITERS_CHECK_MS`: a request that starts later than that after another
 *   process's commit sees it (one pragma per request cost as much as a tenth of the throughput).
 *   PostgreSQL has no such number: other instances' changes are for the cluster bus to tell
 *   (not wired in yet), by calling `forgetCredentials(userId)`, or `forgetAllCredentials(store)`
 *   when it cannot say whose; until then only `MAX_AGE_MS` bounds them.
 * An entry also expires after `MAX_AGE_MS`, and a session entry at the session's own expiry.
 *
 * The lookup is asynchronous (PostgreSQL awaits it), so a change can land between the lookup and
 * remembering what it found. The caller takes `credentialChanges()` before the lookup and hands it
 * to `rememberCredential`: any forgetting counted after it makes the entry stale.
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
  /** The store's `dataVersion`, absent when it has none (PostgreSQL). */
  dataVersion: (() => number) | undefined;
  lastVersion: number;
  /** `performance.now()` of the last pragma: a monotonic clock, whatever clock `now` is. */
  checkedAt: number;
  /** `changes` when the cache was last cleared whole: a lookup that started before then is not remembered. */
  clearedAt: number;
}

interface Remembered extends CachedCredential {
  /** `changes` when the lookup began: a later change of its user makes the entry stale. */
  seen: number;
}

/**
 * Counts in-process changes; `changedAt` keeps, per user, the count of their last change (one
 * number per user changed since start). Module state rather than per store: the stores call
 * `forgetCredentials` with a user id only, and a change concerns every cache alike.
 */
let changes = 0;
const changedAt = new Map<string, number>();

const caches = new WeakMap<Store, Cache>();

function cacheFor(store: Store): Cache {
  let cache = caches.get(store);
  if (!cache) {
    const dataVersion = store.dataVersion?.bind(store);
    cache = { entries: new Map(), dataVersion, lastVersion: dataVersion?.() ?? 0, checkedAt: performance.now(), clearedAt: 0 };
    caches.set(store, cache);
  }
  return cache;
}

/** The entry for a credential hash, if still valid; clears the cache when another connection wrote. */
export function cachedCredential(store: Store, hash: string, now: number): CachedCredential | undefined {
  const cache = cacheFor(store);
  if (cache.dataVersion) {
    const t = performance.now();
    if (t - cache.checkedAt >= OTHER_WRITERS_CHECK_MS) {
      const version = cache.dataVersion();
      cache.checkedAt = t;
      if (version !== cache.lastVersion) {
        // Another connection wrote: which rows it changed is unknown, so everything goes.
        cache.lastVersion = version;
        clear(cache);
        return undefined;
      }
    }
  }
  const entry = cache.entries.get(hash);
  if (!entry) return undefined;
  if (now - entry.at > MAX_AGE_MS || entry.expiresAt <= now || (changedAt.get(entry.principal.user.id) ?? 0) > entry.seen) {
    cache.entries.delete(hash);
    return undefined;
  }
  return entry;
}

/** The count to take before looking a credential up, and to hand to `rememberCredential` with what the lookup found. */
export const credentialChanges = (): number => changes;

/**
 * Remember a credential just resolved from the database by a lookup that began when
 * `credentialChanges()` was `seen`. A change counted since (`forgetCredentials` of its user,
 * `forgetAllCredentials`, another connection's commit) may not be in what the lookup read: the
 * entry is then not kept, or is stale at its first use.
 */
export function rememberCredential(store: Store, hash: string, entry: CachedCredential, seen: number): void {
  const cache = cacheFor(store);
  if (seen < cache.clearedAt) return;
  const { entries } = cache;
  // Oldest first: Map keeps insertion order, so the first key is the least recently resolved.
  if (entries.size >= MAX_ENTRIES && !entries.has(hash)) entries.delete(entries.keys().next().value!);
  // In place: the caller may still update the entry it passed (its last-used stamp).
  (entry as Remembered).seen = seen;
  entries.set(hash, entry as Remembered);
}

function clear(cache: Cache): void {
  cache.entries.clear();
  cache.clearedAt = ++changes;
}

/**
 * Call once a change of a user, or of one of their API keys or sessions, has committed: in this
 * process (any store), or told by the cluster bus of another instance's.
 */
export function forgetCredentials(userId: string, from: 'here' | 'elsewhere' = 'here'): void {
  changedAt.set(userId, ++changes);
  for (const listener of changeListeners) listener(userId, from);
}

/**
 * Forget every credential `store`'s cache holds: for the cluster bus, when another instance
 * changed credentials and whose is not known (a gap in its messages).
 */
export function forgetAllCredentials(store: Store): void {
  clear(cacheFor(store));
  for (const listener of changeListeners) listener(undefined, 'elsewhere');
}

/**
 * A user whose credentials changed (undefined: anyone's may have), and whether the change was made
 * in this process or told by another instance (src/auth/credential-relay.ts passes on only the former).
 */
type ChangeListener = (userId: string | undefined, from: 'here' | 'elsewhere') => void;

const changeListeners = new Set<ChangeListener>();

/**
 * Be told of every `forgetCredentials` and `forgetAllCredentials` call in this process
 * (src/auth/credential-watch.ts ends the open streams of a revoked credential with it). Returns
 * the remover.
 */
export function onCredentialsChanged(listener: ChangeListener): () => void {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}
