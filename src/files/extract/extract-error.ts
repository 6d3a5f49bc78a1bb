/**
 * Why a document could not be turned into text. Each code is the document's fault (or the
 * limits'), never the server's, and its message is written for the person who uploaded it; a
 * caller maps the code to its HTTP answer (docs/files.md, "Documents into text").
 */
export type ExtractErrorCode = 'unsupported' | 'too_large' | 'timeout' | 'damaged';

export class ExtractError extends Error {
  readonly code: ExtractErrorCode;
  constructor(code: ExtractErrorCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts);
    this.name = 'ExtractError';
    this.code = code;
  }
}

/** What crosses the worker boundary: an Error's class does not survive `postMessage`. */
export interface ExtractFailure {
  code: ExtractErrorCode;
  message: string;
}

/** A size for a message: "512 bytes", "12 KB", "31.4 MB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;
}
