/**
 * The bounds every extraction runs inside. The defaults fit a 1 GB board: one extraction at a
 * time keeps the server under ~200 MB of RSS whatever the file holds (docs/files.md has the
 * measurements).
 */
export interface ExtractLimits {
  /** Larger files are refused before a byte is read. */
  maxInputBytes: number;
  /** A PDF that says it has more pages is refused before any page is read. */
  maxPages: number;
  /** Text past this many characters is cut off and the result marked `truncated`. */
  maxOutputChars: number;
  /** The worker is ended after this long. */
  timeoutMs: number;
  /**
   * The worker is ended when the process's RSS grows by more than this while it runs (the worker
   * and PDF.js alone take ~40 MB of it); a PDF stops reading pages (truncated) 16 MB before.
   */
  maxMemoryBytes: number;
  /** DOCX: the sum of the archive's declared uncompressed sizes. */
  maxUnzippedBytes: number;
  /** DOCX: entries in the archive. */
  maxZipEntries: number;
}

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = {
  maxInputBytes: 32 * 1024 * 1024,
  maxPages: 1000,
  maxOutputChars: 1_000_000,
  timeoutMs: 30_000,
  maxMemoryBytes: 112 * 1024 * 1024,
  maxUnzippedBytes: 100 * 1024 * 1024,
  maxZipEntries: 2000,
};
