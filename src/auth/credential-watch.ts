import type { Store } from '../db/work';
import type { Lifecycle } from '../lifecycle';
import type { Logger } from '../log';
import { credentialStillValid } from './authenticate';
import { onCredentialsChanged } from './credential-cache';
import type { Revocable, StreamWatch } from '../http/stream-guard';

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
 *   the credential cache notices the other connection's commit (SQLite's `PRAGMA data_version`).
 *   On PostgreSQL, another instance's change is to arrive through the cluster bus as a
 *   `forgetCredentials` (or `forgetAllCredentials`) call, and is then checked at once, as a
 *   change made in this process.
 *
 * Streams are grouped by credential: each distinct credential is checked once per interval,
 * however many streams it opened, and almost always from the cache.
 */
export interface CredentialWatch {
  /** Follow a stream opened with `ref` (`Authenticated.ref`) for `userId`: revoked once if the credential stops being valid. */
  watch(ref: string, userId: string, stream: Revocable): void;
  /** The stream ended: stop following it. */
  unwatch(ref: string, stream: Revocable): void;
  /** Credentials followed now (tests check that ended streams leave). */
  readonly size: number;
}

/** One stream's credential, as a stream hands itself to it. */
export class WatchedCredential implements StreamWatch {
  constructor(
    private readonly credentials: CredentialWatch,
    private readonly ref: string,
    private readonly userId: string,
  ) {}

  add(stream: Revocable) {
    this.credentials.watch(this.ref, this.userId, stream);
  }

  remove(stream: Revocable) {
    this.credentials.unwatch(this.ref, stream);
  }
}

interface Watched {
  userId: string;
  streams: Set<Revocable>;
}

export function createCredentialWatch(store: Store, opts: { intervalMs: number; now: () => number; log: Logger; lifecycle?: Lifecycle }): CredentialWatch {
  const byRef = new Map<string, Watched>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopped = false;
  let checkingAll = false;

  /** Never rejects: it runs from a timer and from change listeners. */
  const check = async (ref: string): Promise<void> => {
    const watched = byRef.get(ref);
    if (!watched) return;
    let valid: boolean;
    try {
      valid = await credentialStillValid(store, ref, watched.userId, opts.now());
    } catch (err) {
      // A database error says nothing about the credential: the streams stay, the next check retries.
      opts.log.error('credential check failed', { cause: String(err) });
      return;
    }
    if (valid) return;
    // Streams may have come and gone while the lookup was awaited: end the ones there now.
    const current = byRef.get(ref);
    if (!current) return;
    byRef.delete(ref);
    if (!byRef.size) halt();
    for (const stream of current.streams) {
      try {
        stream.revoke();
      } catch (err) {
        // One stream failing to end must not keep the others open, nor escape the timer.
        opts.log.error('ending a stream of a revoked credential failed', { cause: String(err) });
      }
    }
  };
  const checkAll = async () => {
    // A round still awaiting the database (PostgreSQL under load) is not started again on top.
    if (checkingAll) return;
    checkingAll = true;
    try {
      for (const ref of [...byRef.keys()]) await check(ref);
    } finally {
      checkingAll = false;
    }
  };
  const halt = () => {
    clearInterval(timer);
    timer = undefined;
  };
  // `userId` undefined: anyone's credentials may have changed (`forgetAllCredentials`).
  const unlisten = onCredentialsChanged((userId) => {
    if (stopped || !byRef.size) return;
    setImmediate(() => {
      for (const [ref, watched] of byRef) if (userId === undefined || watched.userId === userId) void check(ref);
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
    watch(ref, userId, stream) {
      if (stopped) return;
      let watched = byRef.get(ref);
      if (!watched) byRef.set(ref, (watched = { userId, streams: new Set() }));
      watched.streams.add(stream);
      timer ??= setInterval(checkAll, opts.intervalMs);
    },
    unwatch(ref, stream) {
      const watched = byRef.get(ref);
      if (!watched?.streams.delete(stream) || watched.streams.size) return;
      byRef.delete(ref);
      if (!byRef.size) halt();
    },
    get size() {
      return byRef.size;
    },
  };
}
