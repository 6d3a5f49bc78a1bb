/**
 * Worker entry: decode a GIF's first frame (gif.ts) off the event loop. Its own entry point of
 * the build (scripts/build.ts) so the release binary carries it.
 */
import { decodeGifFirstFrame, GifDecodeError } from './gif';

declare const self: Worker;

self.onmessage = (event: MessageEvent<{ gif: Uint8Array; maxSide?: number }>) => {
  try {
    const { ppm } = decodeGifFirstFrame(event.data.gif, event.data.maxSide);
    self.postMessage({ ppm }, [ppm.buffer as ArrayBuffer]);
  } catch (err) {
    // A malformed GIF is the image's fault and answered as such; anything else is the server's.
    if (err instanceof GifDecodeError) self.postMessage({ error: err.message });
    else throw err;
  }
};
