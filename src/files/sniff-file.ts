import { readImageHeader, type ImageHeader } from '../images/image-header';

/**
 * What an upload is, decided from its bytes (docs/files.md, "Types"): never from the declared
 * content type, and from the name only to tell text flavours apart (Markdown, CSV and plain text
 * are the same bytes to a sniffer). Anything else is refused.
 */
export type Sniffed =
  | { kind: 'image'; mimeType: string; header: ImageHeader }
  | { kind: 'document'; mimeType: DocumentType }
  | { kind: 'document'; mimeType: VideoType; video: true };

/** What a generated video may be (docs/video.md): never an upload's type. */
export type VideoType = 'video/mp4' | 'video/webm';

export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export type DocumentType = 'application/pdf' | typeof DOCX | 'text/html' | 'text/markdown' | 'text/csv' | 'application/json' | 'text/plain';

/** The formats an upload may be, for the refusal's message and the docs. */
export const ACCEPTED = 'images (PNG, JPEG, WebP, GIF, AVIF, BMP, TIFF, ICO, PNM, QOI) and documents (PDF, DOCX, HTML, Markdown, CSV, JSON, plain text)';

/**
 * `head`: the first bytes (at least 4 KiB when the file is that long); `tail`: the last 64 KiB,
 * where a ZIP keeps the names of its entries.
 */
export function sniffFile(head: Uint8Array, tail: Uint8Array, filename: string): Sniffed | undefined {
  const image = readImageHeader(head);
  if (image) return { kind: 'image', mimeType: `image/${image.format === 'pnm' ? 'x-portable-anymap' : image.format === 'ico' ? 'x-icon' : image.format}`, header: image };
  if (startsWith(head, '%PDF-')) return { kind: 'document', mimeType: 'application/pdf' };
  if (startsWith(head, 'PK\x03\x04')) return containsAscii(tail, 'word/document.xml') ? { kind: 'document', mimeType: DOCX } : undefined;
  if (!looksLikeText(head)) return undefined;
  const text = new TextDecoder().decode(head).replace(/^\uFEFF/, '').trimStart();
  const lower = text.slice(0, 64).toLowerCase();
  if (lower.startsWith('<!doctype html') || lower.startsWith('<html') || lower.startsWith('<head') || lower.startsWith('<body')) return { kind: 'document', mimeType: 'text/html' };
  const last = new TextDecoder().decode(tail).trimEnd().at(-1);
  if ((text[0] === '{' && last === '}') || (text[0] === '[' && last === ']')) return { kind: 'document', mimeType: 'application/json' };
  const ext = filename.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  if (ext === 'md' || ext === 'markdown') return { kind: 'document', mimeType: 'text/markdown' };
  if (ext === 'csv' && text.includes(',')) return { kind: 'document', mimeType: 'text/csv' };
  return { kind: 'document', mimeType: 'text/plain' };
}

/**
 * A video a tool made (`generate_video`): MP4 (an ISO media file, its `ftyp` box first) or WebM
 * (a Matroska header). Asked of generated files only: uploads stay the types above.
 */
export function sniffVideo(head: Uint8Array): Sniffed | undefined {
  if (head.length >= 12 && String.fromCharCode(...head.subarray(4, 8)) === 'ftyp') return { kind: 'document', mimeType: 'video/mp4', video: true };
  if (head.length >= 4 && head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return { kind: 'document', mimeType: 'video/webm', video: true };
  return undefined;
}

const startsWith = (b: Uint8Array, ascii: string) => b.length >= ascii.length && [...ascii].every((c, i) => b[i] === c.charCodeAt(0));

function containsAscii(b: Uint8Array, needle: string): boolean {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).includes(needle, 0, 'latin1');
}

/**
 * UTF-8 without NUL bytes. The head may end inside a character: up to three trailing bytes of
 * an unfinished sequence are not held against it.
 */
function looksLikeText(head: Uint8Array): boolean {
  if (head.length === 0 || head.includes(0)) return false;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (let cut = 0; cut <= Math.min(3, head.length - 1); cut++) {
    try {
      decoder.decode(head.subarray(0, head.length - cut));
      return true;
    } catch {
      // try without the last bytes
    }
  }
  return false;
}
