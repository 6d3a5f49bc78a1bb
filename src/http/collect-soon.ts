/**
 * One full garbage collection soon, after the current turn of the event loop, at most one
 * pending at a time: the process's one piece of shared state for it, so a burst of large bodies
 * and large images shares a collection.
 *
 * Large requests leave their garbage mostly in buffers the collector does not weigh by their
 * size, so the heap grows instead of being collected: reading and parsing a body of tens of
 * megabytes leaves about three times its size behind (its bytes, its text, the strings parsed out
 * of it; four 27 MB bodies at once took the server to 250–370 MB depending on when the collector
 * happened to run, ~250 MB with this), a 12 MP conversion ~100 MB (src/images/collect-around-decode.ts).
 * A collection costs 8–17 ms of the event loop, noise beside handling megabytes.
 */
let pending = false;

export function collectSoon(): void {
  if (pending) return;
  pending = true;
  // After the answer is out: by then only a handler that keeps its input still holds any of it.
  setImmediate(() => {
    pending = false;
    Bun.gc(true);
  });
}

/**
 * One full garbage collection now, awaited with a turn of the event loop: the finalizers a
 * collection finds run on the next turn, and they are what frees native memory held by a
 * JavaScript object (an image codec's decoded pixels), so only after that turn is it gone.
 */
export async function collectNow(): Promise<void> {
  Bun.gc(true);
  await new Promise((resolve) => setImmediate(resolve));
}

/** Bodies from this size on are followed by a collection. */
const LARGE_BODY_BYTES = 4 * 1024 * 1024;

export function collectAfterBody(bodyBytes: number): void {
  if (bodyBytes >= LARGE_BODY_BYTES) collectSoon();
}
