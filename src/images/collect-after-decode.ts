import { collectSoon } from '../http/collect-soon';

/**
 * A full garbage collection soon after a large image was decoded (src/http/collect-soon.ts).
 *
 * A 12 MP conversion leaves ~100 MB behind (the request body, its strings, the decoded file, the
 * pixels copied out), much of it in buffers the collector does not weigh by their size: the heap
 * grew instead of being collected, and conversions ran among collector pauses (381–828 ms for
 * the same 12 MP image, 388–407 ms with this; peak memory in docs/extras.md). A collection costs
 * 8–17 ms of the event loop, so small images are not worth it, and a burst of conversions shares
 * one.
 */
const LARGE_PIXELS = 4_000_000;

export function collectAfterDecode(pixels: number): void {
  if (pixels >= LARGE_PIXELS) collectSoon();
}
