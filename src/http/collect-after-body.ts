/**
 * A full garbage collection soon after a large body was read, at most one pending at a time.
 *
 * Reading and parsing a body of tens of megabytes leaves about three times its size behind once
 * the request is answered (its bytes, its text, the strings parsed out of it), mostly in buffers
 * the collector does not weigh by their size. Four 27 MB bodies at once took the server to
 * 250–370 MB, depending on when the collector happened to run; with this, ~250 MB. A collection
 * costs ~10 ms of the event loop, noise beside reading megabytes, and a burst shares one.
 * (src/images/collect-after-decode.ts does the same after a large image was decoded.)
 */
const LARGE_BODY_BYTES = 4 * 1024 * 1024;

let pending = false;

export function collectAfterBody(bodyBytes: number): void {
  if (bodyBytes < LARGE_BODY_BYTES || pending) return;
  pending = true;
  // After the answer is out: by then only a handler that keeps its input still holds any of it.
  setImmediate(() => {
    pending = false;
    Bun.gc(true);
  });
}
