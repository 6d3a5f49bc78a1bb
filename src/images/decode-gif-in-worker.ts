/**
 * Decode a GIF's first frame in a worker thread, so that 50 million pixels of LZW and palette
 * lookups in JavaScript (seconds on a small board) never hold the event loop: the server keeps
 * answering while they run. One short-lived worker per GIF: GIFs are a small share of
 * conversions, and a finished worker gives all its memory back.
 *
 * Resolves with the frame as a PPM file (gif.ts; shrunk to fit `maxSide` when it is larger), or
 * with the reason a malformed GIF was refused; rejects when the worker itself fails (a server
 * fault, not the image's).
 */
export function decodeGifInWorker(gif: Uint8Array, maxSide?: number): Promise<{ ppm: Uint8Array } | { error: string }> {
  // `smol`: a smaller heap for a thread that only fills typed arrays.
  const worker = new Worker(new URL('./gif-worker.ts', import.meta.url), { smol: true });
  return new Promise<{ ppm: Uint8Array } | { error: string }>((resolve, reject) => {
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(`the GIF decoder failed: ${event.message}`));
    // A copy: the caller's bytes stay usable (moving their buffer would detach them).
    worker.postMessage({ gif, maxSide });
  }).finally(() => worker.terminate());
}
