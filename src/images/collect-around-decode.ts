import { collectNow } from '../http/collect-soon';

/**
 * Runs `decode`, which decodes an image of `pixels` pixels, and around a large one a full garbage
 * collection before it starts and another, awaited, before the result is handed back
 * (src/http/collect-soon.ts).
 *
 * The codec's decoded pixels (64 MB for 4096 × 4096) live until the collector finalizes the
 * JavaScript object that holds them, and the collector does not weigh that memory: left to it, the
 * next decode in line (or a document read) started beside the last one's pixels, and an upload
 * beside a DOCX peaked at 286 MB where either alone took 250 (scripts/fault/bombs.ts). Collected
 * after, within the caller's turn (src/http/turnstile.ts), the turn passes on with the memory
 * given back; that collection runs after `decode` has returned, when nothing of its frame holds
 * the pixels any more. Collected before, a decode does not start beside what other work left
 * for the collector: after a run of GIF conversions the server kept ~35 MB that only the next
 * collection gave back, and an upload of the largest PNG then peaked at 277 MB instead of 241
 * (bench/RESULTS.md "Image memory"). A 12 MP conversion leaves ~100 MB behind; a collection costs
 * 8–17 ms of the event loop, so small images are not worth either.
 */
const LARGE_PIXELS = 4_000_000;

export async function decodeBetweenCollections<T>(pixels: number, decode: () => Promise<T>): Promise<T> {
  if (pixels >= LARGE_PIXELS) await collectNow();
  try {
    return await decode();
  } finally {
    if (pixels >= LARGE_PIXELS) await collectNow();
  }
}
