/**
 * Characters a file name loses, whatever its source (docs/files.md, "The file"): controls (C0,
 * C1), line and paragraph separators, and every invisible formatting character (Unicode's Cf):
 * the bidi overrides, embeddings, isolates and marks that make `invoice<U+202E>fdp.exe` show as
 * `invoiceexe.pdf`, zero-width spaces, the word joiner, the byte-order mark, soft hyphens, tag
 * characters. Kept: the zero-width joiner and non-joiner, which shape Persian and Indic words
 * and join emoji, and reorder nothing.
 */
const UNSAFE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

/** The longest name kept, in characters. */
const MAX_CHARS = 200;

/** The last part of a path, without unsafe characters, trimmed, at most 200 characters; `upload` when nothing is left. */
export function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  // Cut by code points, so a surrogate pair is never split in two.
  const clean = [...base.replace(UNSAFE, '').trim()].slice(0, MAX_CHARS).join('');
  return clean.trim() || 'upload';
}
