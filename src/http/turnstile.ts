/**
 * At most `max` requests of one kind at once; the others wait their turn, first come first served.
 *
 * For operations that hold much memory while they run: a 12 MP image conversion holds ~120 MB
 * (the decoded image, the pixels copied out, the encoder's buffers), and 16 uploads at once
 * peaked at 1.9 GB of RSS, more than a 1 or 2 GB Raspberry Pi has, finishing no sooner than a
 * queue does on two cores (docs/extras.md). Requests wait once their body is received and before
 * it is parsed (src/http/register.ts), so a waiting request holds its bytes only; one whose
 * client has left (its signal aborted), before or while it waits, is dropped and never runs.
 */
export interface Turnstile {
  /** Wait for a turn; resolves with the (idempotent) release, or rejects with `TurnAbandoned`. */
  acquire(signal?: AbortSignal): Promise<() => void>;
  readonly running: number;
  readonly waiting: number;
}

export class TurnAbandoned extends Error {
  constructor() {
    super('The request was cancelled before its turn.');
  }
}

export function createTurnstile(max: number): Turnstile {
  let running = 0;
  const queue: (() => void)[] = [];

  const releaser = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot goes straight to the next in line (`running` unchanged), so a request
      // arriving at this moment cannot take it out of turn.
      const next = queue.shift();
      if (next) next();
      else running--;
    };
  };

  return {
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(new TurnAbandoned());
      if (running < max) {
        running++;
        return Promise.resolve(releaser());
      }
      return new Promise((resolve, reject) => {
        const start = () => {
          signal?.removeEventListener('abort', abandon);
          resolve(releaser());
        };
        const abandon = () => {
          const i = queue.indexOf(start);
          if (i >= 0) queue.splice(i, 1);
          reject(new TurnAbandoned());
        };
        signal?.addEventListener('abort', abandon, { once: true });
        queue.push(start);
      });
    },
  };
}
