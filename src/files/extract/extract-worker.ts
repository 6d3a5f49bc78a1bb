/**
 * Worker entry: read one document and post its text back (extract-text.ts starts it and holds
 * the time and memory bounds). Its own entry point of the build (scripts/build.ts) so the
 * release binary carries it. Everything the document can make go wrong is answered as an
 * `ExtractFailure`; the parent treats anything else as the server's fault.
 */
import type { DocumentFormat } from './document-format';
import { ExtractError, formatSize, type ExtractFailure } from './extract-error';
import type { ExtractLimits } from './extract-limits';
import { capText, decodeText, prettyJson } from './read-plain';

declare const self: Worker;

export interface ExtractRequest {
  path: string;
  format: DocumentFormat;
  charset: string | undefined;
  limits: ExtractLimits;
  /** The process's RSS when the worker was started (extract-text.ts watches it from there). */
  rssBaseline: number;
}

// A PDF's remaining pages are left unread once the process is this close to the memory limit:
// its pages add a little each, so this is a long PDF cut short rather than refused.
const PDF_MEMORY_MARGIN = 16 * 1024 * 1024;

export type ExtractReply =
  | { ok: true; text: string; pages?: number; pageStarts?: number[]; truncated: boolean }
  | ({ ok: false } & ExtractFailure);

self.onmessage = async (event: MessageEvent<ExtractRequest>) => {
  let reply: ExtractReply;
  try {
    reply = { ok: true, ...(await extractInWorker(event.data)) };
  } catch (err) {
    if (!(err instanceof ExtractError)) throw err;
    reply = { ok: false, code: err.code, message: err.message };
  }
  self.postMessage(reply);
};

async function extractInWorker({ path, format, charset, limits, rssBaseline }: ExtractRequest) {
  const bytes = await Bun.file(path).bytes();
  // The caller checked the size; the file may have grown since.
  if (bytes.length > limits.maxInputBytes)
    throw new ExtractError('too_large', `The file is ${formatSize(bytes.length)}; at most ${formatSize(limits.maxInputBytes)} can be read.`);
  const max = limits.maxOutputChars;
  switch (format) {
    case 'pdf': {
      // Imported here so that a text file does not pay for parsing PDF.js.
      const { readPdf } = await import('./read-pdf');
      const roomy = rssBaseline + limits.maxMemoryBytes - PDF_MEMORY_MARGIN;
      const pdf = await readPdf(bytes, limits, (chars) => chars >= max || process.memoryUsage.rss() > roomy);
      const capped = capText(pdf.text, max);
      return {
        text: capped.text,
        pages: pdf.pages,
        pageStarts: pdf.pageStarts.filter((start) => start < capped.text.length || start === 0),
        truncated: pdf.truncated || capped.truncated,
      };
    }
    case 'docx': {
      const { readDocx } = await import('./read-docx');
      return capText(await readDocx(bytes, limits), max);
    }
    case 'html': {
      const { htmlToText } = await import('./read-html');
      return htmlToText(decodeText(bytes, charset), max);
    }
    case 'json':
      return prettyJson(decodeText(bytes, charset), max);
    case 'markdown':
    case 'text':
    case 'csv':
      return capText(decodeText(bytes, charset).replace(/\r\n?/g, '\n'), max);
  }
}
