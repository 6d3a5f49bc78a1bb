/**
 * Remove a PNG's compressed ancillary chunks (iCCP, zTXt, iTXt) before it reaches the decoder.
 *
 * Their size on disk says nothing about what they inflate to: a 1×1 PNG whose ICC profile is
 * 300 MB of zeros is a 290 KB file, and the codec inflated that profile whole while reading the
 * header, 240 MB of the server's memory (docs/extras.md). The pixel limit cannot see it, and
 * inflating with a bound would still spend the bound. The conversion uses none of the three:
 * @napi-rs/image 1.15.0 neither applies an ICC profile nor copies it (or any text) into the JPEG
 * (test/images.test.ts pins that), so dropping them changes no output byte, costs no inflating,
 * and a bomb in them is gone whatever its size. Re-check on a codec upgrade that applies colour
 * profiles. ICO files are handled too: each of their images may be a whole PNG.
 */

const COMPRESSED = new Set(['iCCP', 'zTXt', 'iTXt']);
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const isPng = (b: Uint8Array, at = 0) => PNG_SIGNATURE.every((x, i) => b[at + i] === x);
const chunkType = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/**
 * The PNG without its compressed ancillary chunks, or the same bytes when it has none. A chunk
 * running past the end stops the walk there: the rest is left for the decoder to refuse.
 */
export function stripPngChunks(png: Uint8Array): Uint8Array {
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const kept: Uint8Array[] = [];
  let from = 0; // start of the run of bytes kept since the last dropped chunk
  let at = PNG_SIGNATURE.length;
  while (at + 12 <= png.length) {
    const end = at + 12 + v.getUint32(at);
    if (end > png.length) break;
    if (COMPRESSED.has(chunkType(png, at + 4))) {
      kept.push(png.subarray(from, at));
      from = end;
    }
    at = end;
  }
  if (from === 0) return png;
  kept.push(png.subarray(from));
  return new Uint8Array(Buffer.concat(kept));
}

/** An ICO whose PNG images are stripped as above; the same bytes when none needed it. */
export function stripIcoChunks(ico: Uint8Array): Uint8Array {
  const v = new DataView(ico.buffer, ico.byteOffset, ico.byteLength);
  const count = v.getUint16(4, true);
  const dirEnd = 6 + 16 * count;
  if (dirEnd > ico.length) return ico;
  const images: Uint8Array[] = [];
  let changed = false;
  for (let i = 0; i < count; i++) {
    const size = v.getUint32(6 + 16 * i + 8, true);
    const offset = v.getUint32(6 + 16 * i + 12, true);
    if (offset + size > ico.length) return ico; // the decoder refuses it
    const image = ico.subarray(offset, offset + size);
    const stripped = isPng(image) ? stripPngChunks(image) : image;
    changed ||= stripped !== image;
    images.push(stripped);
  }
  if (!changed) return ico;
  // The same directory with each image's new size and offset, the images one after another.
  const out = new Uint8Array(dirEnd + images.reduce((n, img) => n + img.length, 0));
  out.set(ico.subarray(0, dirEnd));
  const ov = new DataView(out.buffer);
  let offset = dirEnd;
  images.forEach((image, i) => {
    ov.setUint32(6 + 16 * i + 8, image.length, true);
    ov.setUint32(6 + 16 * i + 12, offset, true);
    out.set(image, offset);
    offset += image.length;
  });
  return out;
}
