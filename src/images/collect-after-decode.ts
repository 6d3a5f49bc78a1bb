import { collectNow } from '../http/collect-soon';

/**
 * Runs `decode`, which decodes an image of `pixels` pixels, and after a large one a full garbage
 * collection, awaited before the result is handed back (src/http/collect-soon.ts).
 *
 * The codec's decoded pixels (64 MB for 4096 × 4096) live until the collector finalizes the
 * JavaScript object that holds them, and the collector does not weigh that memory: left to it, the
 * next decode in line (or a document read) started beside the last one's pixels, and an upload
 * beside a DOCX peaked at 286 MB where either alone took 250 (scripts/fault/bombs.ts). Collected
 * here, within the caller's turn (src/http/turnstile.ts), the turn passes on with the memory
 * given back. The collection runs after `decode` has returned, when nothing of its frame holds the
 * pixels any more. A 12 MP conversion leaves ~100 MB behind; a collection costs 8–17 ms of the
 * event loop, so small images are not worth it.
 */
const LARGE_PIXELS = 4_000_000;

export async function afterDecodeCollected<T>(pixels: number, decode: () => Promise<T>): Promise<T> {
  try {
    return await decode();
  } finally {
    if (pixels >= LARGE_PIXELS) await collectNow();
  }
}
