import type { Db } from '../db/connection';
import type { Lifecycle } from '../lifecycle';
import type { Logger } from '../log';
import { credentialStillValid } from './authenticate';
import { onCredentialsChanged } from './credential-cache';

/**
 * Open event streams end when the credential that opened them stops being valid: a revoked API
 * key, a signed-out or expired session. A request is authenticated once, when it
 * starts, and a stream lasts for hours: without this, a leaked key revoked by its owner would go
 * on receiving a group's messages for as long as its stream stayed open.
 *
 * - A change made in this process (`forgetCredentials`: `auth/revokeApiKey`, signing out, a user
 *   changed) is checked right after the change, on the next turn of the event loop, when its
 *   transaction has committed: the user's streams end before anything else is sent to them.
 * - A change made by another process (`parley apikey revoke`, `parley session revoke`) is seen
 *   at the next check, every `intervalMs` (the heartbeat interval, `PARLEY_SSE_HEARTBEAT_S`):
 *   the credential cache notices the other connection's commit (`PRAGMA data_version`).
 *
 * Streams are grouped by credential: each distinct credential is checked once per interval,
 * however many streams it opened, and almost always from the cache.
 */
export interface CredentialWatch {
  /** Follow a stream opened with `ref` (`Authenticated.ref`) for `userId`; `onInvalid` runs once if the credential stops being valid. Returns the remover. */
  watch(ref: string, userId: string, onInvalid: () => void): () => void;
  /** Credentials followed now (tests check that ended streams leave). */
  readonly size: number;
}

interface Watched {
  userId: string;
  streams: Set<() => void>;
}

export function createCredentialWatch(db: Db, opts: { intervalMs: number; now: () => number; log: Logger; lifecycle?: Lifecycle }): CredentialWatch {
  const byRef = new Map<string, Watched>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopped = false;

  const check = (ref: string) => {
    const watched = byRef.get(ref);
    if (!watched) return;
    let valid: boolean;
    try {
      valid = credentialStillValid(db, ref, watched.userId, opts.now());
    } catch (err) {
      // A database error says nothing about the credential: the streams stay, the next check retries.
      opts.log.error('credential check failed', { cause: String(err) });
      return;
    }
    if (valid) return;
    byRef.delete(ref);
    if (!byRef.size) halt();
    for (const end of watched.streams) end();
  };
  const checkAll = () => {
    for (const ref of [...byRef.keys()]) check(ref);
  };
  const halt = () => {
    clearInterval(timer);
    timer = undefined;
  };
  const unlisten = onCredentialsChanged((userId) => {
    if (stopped || !byRef.size) return;
    setImmediate(() => {
      for (const [ref, watched] of byRef) if (watched.userId === userId) check(ref);
    });
  });
  const stop = () => {
    stopped = true;
    unlisten();
    halt();
    byRef.clear();
  };
  opts.lifecycle?.onShutdown('credential watch', stop);

  return {
    watch(ref, userId, onInvalid) {
      if (stopped) return () => {};
      let watched = byRef.get(ref);
      if (!watched) byRef.set(ref, (watched = { userId, streams: new Set() }));
      const stream = () => onInvalid();
      watched.streams.add(stream);
      timer ??= setInterval(checkAll, opts.intervalMs);
      return () => {
        const current = byRef.get(ref);
        if (!current?.streams.delete(stream) || current.streams.size) return;
        byRef.delete(ref);
        if (!byRef.size) halt();
      };
    },
    get size() {
      return byRef.size;
    },
  };
}
