/**
 * GIF first-frame decoder. @napi-rs/image is built without a GIF decoder, so Parley reads the
 * first frame itself: the frame's LZW stream decoded onto the logical screen. Parley flattens
 * transparency onto white anyway, so the canvas starts white and opaque, and the pixels the frame
 * leaves transparent (or does not reach) stay white. The caller has already bounded width × height
 * from the header. It runs in a worker (gif-worker.ts), so it may take its time in one go.
 *
 * The result is a binary PPM (P6) file: RGB, which is all a JPEG keeps, so 3 bytes a pixel rather
 * than 4, and a file the codec decodes on its own threads with no copy into it on the event loop
 * (`Transformer.fromRgbaPixels` copies its input synchronously: ~1 s for 50 million pixels).
 *
 * With `maxSide`, a frame larger than that comes out shrunk to fit it (each pixel the average of
 * the ones it covers), without the full-size canvas ever being made: an upload keeps the GIF as
 * sent and needs pixels for its thumbnail only, and a 4096 × 4096 canvas is 50 MB of RGB in the
 * worker and 100 MB more once the codec has decoded and resized it.
 */

export interface RgbImage {
  width: number;
  height: number;
  /** The whole PPM file. */
  ppm: Uint8Array;
  /** Its pixels, row by row, 3 bytes each (a view into `ppm`). */
  rgb: Uint8Array;
}

export class GifDecodeError extends Error {}

export function decodeGifFirstFrame(b: Uint8Array, maxSide = Infinity): RgbImage {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const need = (n: number) => {
    if (n > b.length) throw new GifDecodeError('truncated GIF');
  };
  need(13);
  const screenW = v.getUint16(6, true);
  const screenH = v.getUint16(8, true);
  const flags = b[10]!;
  let at = 13;
  let palette: Uint8Array | undefined;
  if (flags & 0x80) {
    const size = 3 * (1 << ((flags & 7) + 1));
    need(at + size);
    palette = b.subarray(at, at + size);
    at += size;
  }
  let transparent = -1;
  for (;;) {
    need(at + 1);
    const block = b[at]!;
    if (block === 0x3b) throw new GifDecodeError('GIF without an image');
    if (block === 0x21) {
      need(at + 2);
      // Graphic control extension: remember the first frame's transparent colour index.
      if (b[at + 1] === 0xf9 && b[at + 2] === 4) {
        need(at + 8);
        if (b[at + 3]! & 1) transparent = b[at + 6]!;
      }
      at += 2;
      while (need(at + 1), b[at] !== 0) at += 1 + b[at]!;
      at++;
      continue;
    }
    if (block !== 0x2c) throw new GifDecodeError(`unexpected GIF block 0x${block.toString(16)}`);
    break;
  }
  need(at + 11);
  const left = v.getUint16(at + 1, true);
  const top = v.getUint16(at + 3, true);
  const fw = v.getUint16(at + 5, true);
  const fh = v.getUint16(at + 7, true);
  const fflags = b[at + 9]!;
  at += 10;
  if (fflags & 0x80) {
    const size = 3 * (1 << ((fflags & 7) + 1));
    need(at + size);
    palette = b.subarray(at, at + size);
    at += size;
  }
  if (!palette) throw new GifDecodeError('GIF without a colour table');
  const minCodeSize = b[at++]!;
  if (minCodeSize < 2 || minCodeSize > 11) throw new GifDecodeError('bad LZW code size');
  // Gather the data sub-blocks into one stream.
  const parts: Uint8Array[] = [];
  let total = 0;
  while (at < b.length && b[at] !== 0) {
    const len = b[at]!;
    parts.push(b.subarray(at + 1, Math.min(b.length, at + 1 + len)));
    total += len;
    at += 1 + len;
  }
  const data = new Uint8Array(total);
  let o = 0;
  for (const p of parts) data.set(p, o), (o += p.length);

  const frame: Frame = {
    indices: lzwDecode(data, minCodeSize, fw * fh),
    left,
    top,
    width: fw,
    height: fh,
    rows: fflags & 0x40 ? interlacedRows(fh) : null,
    palette,
    transparent,
  };
  const width = Math.max(screenW, left + fw);
  const height = Math.max(screenH, top + fh);
  const scale = Math.max(width / maxSide, height / maxSide, 1);
  return scale > 1 ? paintShrunk(frame, width, height, Math.max(1, Math.round(width / scale)), Math.max(1, Math.round(height / scale))) : paint(frame, width, height);
}

interface Frame {
  /** A palette index a pixel, row by row in the order of the stream. */
  indices: Uint8Array;
  left: number;
  top: number;
  width: number;
  height: number;
  /** Row r of the stream is image row rows[r] (interlaced), else row r. */
  rows: Uint32Array | null;
  palette: Uint8Array;
  transparent: number;
}

function emptyPpm(width: number, height: number): RgbImage {
  const head = new TextEncoder().encode(`P6\n${width} ${height}\n255\n`);
  const ppm = new Uint8Array(head.length + width * height * 3);
  ppm.set(head);
  return { width, height, ppm, rgb: ppm.subarray(head.length) };
}

/** The frame on a white canvas of its full size. */
function paint(f: Frame, width: number, height: number): RgbImage {
  const out = emptyPpm(width, height);
  const rgb = out.rgb.fill(255);
  const { indices, palette, transparent } = f;
  for (let r = 0; r < f.height; r++) {
    const y = f.top + (f.rows ? f.rows[r]! : r);
    for (let x = 0; x < f.width; x++) {
      const idx = indices[r * f.width + x]!;
      if (idx === transparent || 3 * idx + 2 >= palette.length) continue;
      const p = (y * width + f.left + x) * 3;
      rgb[p] = palette[3 * idx]!;
      rgb[p + 1] = palette[3 * idx + 1]!;
      rgb[p + 2] = palette[3 * idx + 2]!;
    }
  }
  return out;
}

/**
 * The frame on a white canvas of `width` × `height`, shrunk to `outW` × `outH` by averaging: the
 * sums start as if every pixel were white, and each painted pixel adds its difference from white.
 * A cell covers some thousands of pixels at most, so its sums fit 32 bits.
 */
function paintShrunk(f: Frame, width: number, height: number, outW: number, outH: number): RgbImage {
  const colOf = new Uint32Array(width);
  const colCount = new Uint32Array(outW);
  for (let x = 0; x < width; x++) colCount[(colOf[x] = Math.floor((x * outW) / width))]!++;
  const rowCount = new Uint32Array(outH);
  for (let y = 0; y < height; y++) rowCount[Math.floor((y * outH) / height)]!++;
  const sums = new Uint32Array(outW * outH * 3);
  for (let oy = 0; oy < outH; oy++) for (let ox = 0; ox < outW; ox++) sums.fill(255 * rowCount[oy]! * colCount[ox]!, (oy * outW + ox) * 3, (oy * outW + ox) * 3 + 3);
  const { indices, palette, transparent } = f;
  for (let r = 0; r < f.height; r++) {
    const y = f.top + (f.rows ? f.rows[r]! : r);
    const row = Math.floor((y * outH) / height) * outW;
    for (let x = 0; x < f.width; x++) {
      const idx = indices[r * f.width + x]!;
      if (idx === transparent || 3 * idx + 2 >= palette.length) continue;
      const p = (row + colOf[f.left + x]!) * 3;
      sums[p]! += palette[3 * idx]! - 255;
      sums[p + 1]! += palette[3 * idx + 1]! - 255;
      sums[p + 2]! += palette[3 * idx + 2]! - 255;
    }
  }
  const out = emptyPpm(outW, outH);
  for (let oy = 0; oy < outH; oy++)
    for (let ox = 0; ox < outW; ox++) {
      const n = rowCount[oy]! * colCount[ox]!;
      for (let c = 0, p = (oy * outW + ox) * 3; c < 3; c++) out.rgb[p + c] = Math.round(sums[p + c]! / n);
    }
  return out;
}

/** Row r of the stream is image row rows[r] (passes every 8th from 0, 8th from 4, 4th from 2, 2nd from 1). */
function interlacedRows(h: number): Uint32Array {
  const rows = new Uint32Array(h);
  let i = 0;
  for (const [start, step] of [[0, 8], [4, 8], [2, 4], [1, 2]] as const) for (let y = start; y < h; y += step) rows[i++] = y;
  return rows;
}

/** Variable-width LZW (GIF flavour, codes up to 12 bits). Missing pixels stay index 0. */
function lzwDecode(data: Uint8Array, minCodeSize: number, pixels: number): Uint8Array {
  const out = new Uint8Array(pixels);
  const clear = 1 << minCodeSize;
  const end = clear + 1;
  const prefix = new Int16Array(4096);
  const suffix = new Uint8Array(4096);
  const first = new Uint8Array(4096);
  const length = new Uint16Array(4096);
  for (let i = 0; i < clear; i++) (prefix[i] = -1), (suffix[i] = i), (first[i] = i), (length[i] = 1);
  let size = minCodeSize + 1;
  let next = end + 1;
  let prev = -1;
  let acc = 0;
  let bits = 0;
  let op = 0;
  for (let i = 0; i < data.length && op < pixels; i++) {
    acc |= data[i]! << bits;
    bits += 8;
    while (bits >= size && op < pixels) {
      const code = acc & ((1 << size) - 1);
      acc >>>= size;
      bits -= size;
      if (code === clear) {
        size = minCodeSize + 1;
        next = end + 1;
        prev = -1;
        continue;
      }
      if (code === end) return out;
      let k: number;
      let emit: number;
      if (prev === -1) {
        if (code >= clear) throw new GifDecodeError('bad LZW stream');
        out[op++] = code;
        prev = code;
        continue;
      }
      if (code < next) {
        emit = code;
        k = first[code]!;
      } else if (code === next) {
        emit = -1; // prev's string followed by its own first byte
        k = first[prev]!;
      } else throw new GifDecodeError('bad LZW code');
      if (next < 4096) {
        prefix[next] = prev;
        suffix[next] = k;
        first[next] = first[prev]!;
        length[next] = length[prev]! + 1;
        next++;
        if (next === 1 << size && size < 12) size++;
      }
      // Write the string of `emit` (or of the entry just made) backwards along its prefix chain.
      let c = emit === -1 ? next - 1 : emit;
      const len = length[c]!;
      let w = op + len - 1;
      while (c !== -1) {
        if (w < pixels) out[w] = suffix[c]!;
        w--;
        c = prefix[c]!;
      }
      op += len;
      prev = code;
    }
  }
  return out;
}
