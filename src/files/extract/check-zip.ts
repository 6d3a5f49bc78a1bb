/**
 * A DOCX is a ZIP archive, and a ZIP's central directory says how large every entry unpacks to.
 * Before the DOCX library inflates anything, the directory is read (a few hundred bytes of
 * fixed-layout records) and the archive refused if it has too many entries or declares too much;
 * then every entry is inflated natively with its declared size as a hard ceiling, so an entry
 * that lies about its size (the classic bomb: 1 KB declared, gigabytes inside) is caught after at
 * most its declared size, not after the memory is gone.
 *
 * ZIP64 is not read: its markers (0xFFFF entries, 0xFFFFFFFF sizes) are taken at their word and
 * refused as too many or too large; a Word document is far below both.
 */
import { inflateRawSync } from 'node:zlib';
import { ExtractError, formatSize } from './extract-error';
import type { ExtractLimits } from './extract-limits';

interface ZipEntry {
  name: string;
  flags: number;
  method: number;
  compressedSize: number;
  size: number;
  localHeader: number;
}

const damaged = (why: string) => new ExtractError('damaged', `The file isn't a readable Word document (${why}); it may be damaged.`);

/**
 * The DOCX reader holds an XML part's tree in memory at 8 to 180 times the part's size (measured:
 * 2 MB of text paragraphs took 57 MB, 8 MB 157 MB; 2 MB of one-letter paragraphs 360 MB), so a
 * part larger than this share of the memory limit could never be read within it. Refused from the
 * directory, it costs nothing; let through, unpacking it (here, then in the reader) is one native
 * step the worker cannot be stopped in, and ran ~100 MB past the limit before the worker ended.
 */
const XML_PART_SHARE = 8;

export function checkZip(bytes: Uint8Array, limits: Pick<ExtractLimits, 'maxUnzippedBytes' | 'maxZipEntries' | 'maxMemoryBytes'>): void {
  const entries = readCentralDirectory(bytes, limits.maxZipEntries);
  const maxPart = Math.floor(limits.maxMemoryBytes / XML_PART_SHARE);
  let total = 0;
  for (const entry of entries) {
    total += entry.size;
    if (total > limits.maxUnzippedBytes)
      throw new ExtractError('too_large', `The document unpacks to more than ${formatSize(limits.maxUnzippedBytes)}, the most that can be read.`);
    if (/\.(xml|rels)$/i.test(entry.name) && entry.size > maxPart)
      throw new ExtractError('too_large', `The document's part ${JSON.stringify(entry.name)} unpacks to ${formatSize(entry.size)}; at most ${formatSize(maxPart)} can be read.`);
    if (entry.flags & 1) throw new ExtractError('unsupported', 'The document is password-protected; remove the password and upload it again.');
    if (entry.method !== 0 && entry.method !== 8) throw new ExtractError('unsupported', 'The document is compressed in a way Parley cannot read; save it again from your word processor.');
  }
  for (const entry of entries) checkEntrySize(bytes, entry);
}

function readCentralDirectory(bytes: Uint8Array, maxEntries: number): ZipEntry[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const eocd = findEndOfCentralDirectory(v);
  const count = v.getUint16(eocd + 10, true);
  if (count > maxEntries) throw new ExtractError('too_large', `The document has more than ${maxEntries} parts, the most that can be read.`);
  let at = v.getUint32(eocd + 16, true);
  const entries: ZipEntry[] = [];
  const decoder = new TextDecoder();
  for (let i = 0; i < count; i++) {
    if (at + 46 > eocd || v.getUint32(at, true) !== 0x02014b50) throw damaged('a broken archive directory');
    const nameLength = v.getUint16(at + 28, true);
    entries.push({
      name: decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
      flags: v.getUint16(at + 8, true),
      method: v.getUint16(at + 10, true),
      compressedSize: v.getUint32(at + 20, true),
      size: v.getUint32(at + 24, true),
      localHeader: v.getUint32(at + 42, true),
    });
    at += 46 + nameLength + v.getUint16(at + 30, true) + v.getUint16(at + 32, true);
  }
  return entries;
}

/** The end record is the last 22 bytes, unless an archive comment (≤ 64 KB) follows it. */
function findEndOfCentralDirectory(v: DataView): number {
  const last = v.byteLength - 22;
  for (let at = last; at >= 0 && at >= last - 0xffff; at--) {
    if (v.getUint32(at, true) === 0x06054b50) return at;
  }
  throw damaged('not a ZIP archive');
}

function checkEntrySize(bytes: Uint8Array, entry: ZipEntry): void {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localHeader;
  if (at + 30 > bytes.length || v.getUint32(at, true) !== 0x04034b50) throw damaged(`a broken entry ${JSON.stringify(entry.name)}`);
  const start = at + 30 + v.getUint16(at + 26, true) + v.getUint16(at + 28, true);
  const data = bytes.subarray(start, start + entry.compressedSize);
  if (data.length !== entry.compressedSize) throw damaged(`a truncated entry ${JSON.stringify(entry.name)}`);
  if (entry.method === 0) {
    if (entry.compressedSize !== entry.size) throw damaged(`an inconsistent entry ${JSON.stringify(entry.name)}`);
    return;
  }
  let inflated: Uint8Array;
  try {
    inflated = inflateRawSync(data, { maxOutputLength: Math.max(entry.size, 1) });
  } catch {
    // Over its declared size (ERR_BUFFER_TOO_LARGE) or not deflate data at all.
    throw damaged(`entry ${JSON.stringify(entry.name)} does not unpack to its declared size`);
  }
  if (inflated.length !== entry.size) throw damaged(`entry ${JSON.stringify(entry.name)} does not unpack to its declared size`);
}
