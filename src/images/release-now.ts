/**
 * Give an array's memory back at once instead of when the collector gets to it: transferring its
 * buffer to a length of 0 detaches it, and the runtime frees the contents there and then. Left to
 * the collector, the 64 MB copy a 4096 × 4096 image's alpha check takes was still there, now and
 * then, when the flattening made its own copy of the image (bench/RESULTS.md "Image memory").
 * Only for an array that owns its whole buffer: a small one may share its buffer with others.
 * The array and every view of its buffer are empty afterwards.
 */
export function releaseNow(px: Uint8Array): void {
  if (px.byteOffset === 0 && px.byteLength === px.buffer.byteLength && px.buffer instanceof ArrayBuffer) px.buffer.transfer(0);
}
