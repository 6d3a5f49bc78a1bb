/**
 * A full garbage collection soon after a large image was decoded, at most one pending at a time.
 *
 * A 12 MP conversion leaves ~100 MB behind (the request body, its strings, the decoded file, the
 * pixels copied out), much of it in buffers the collector does not weigh by their size: the heap
 * grew instead of being collected, and 16 queued 12 MP uploads still peaked at 1.0 GB with two
 * converting at a time. A collection after each (8–17 ms on the event loop) brought that to
 * 0.37 GB (docs/extras.md). Small images are not worth the pause, and a burst of conversions
 * shares one collection: the garbage is the whole process's, so this is the one piece of
 * process-wide state in the images domain.
 */
const LARGE_PIXELS = 4_000_000;

let pending = false;

export function collectAfterDecode(pixels: number): void {
  if (pixels < LARGE_PIXELS || pending) return;
  pending = true;
  // After the answer is out: the handler's references (the data URL, the result) are gone by then.
  setImmediate(() => {
    pending = false;
    Bun.gc(true);
  });
}
