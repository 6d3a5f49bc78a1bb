/**
 * PDF text through unpdf (a build of Mozilla's PDF.js that needs no worker file or canvas of its
 * own). Page by page, so the page cap is checked before any page is read and reading stops once
 * the text cap is reached. PDF.js is told to run no code from the file (`isEvalSupported`) and to
 * load no fonts from the system. A scanned PDF without a text layer gives empty text.
 */
import { getDocumentProxy } from 'unpdf';
import { ExtractError } from './extract-error';
import type { ExtractLimits } from './extract-limits';

export interface PdfText {
  text: string;
  pages: number;
  /** Where each page's text starts in `text` (index 0 is page 1). */
  pageStarts: number[];
  truncated: boolean;
}

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

/**
 * `outOfRoom` is asked before each page: past the output cap, or once the process has used most
 * of its memory allowance, the pages read so far are the result (marked truncated), which is
 * kinder than the refusal the hard memory limit would give a long but honest PDF.
 */
export async function readPdf(bytes: Uint8Array, limits: ExtractLimits, outOfRoom: (chars: number) => boolean): Promise<PdfText> {
  const pdf = await openPdf(bytes);
  try {
    if (pdf.numPages > limits.maxPages)
      throw new ExtractError('too_large', `The PDF has ${pdf.numPages} pages; at most ${limits.maxPages} can be read.`);
    return await readPages(pdf, outOfRoom);
  } catch (err) {
    if (err instanceof ExtractError) throw err;
    throw new ExtractError('damaged', "The PDF's pages can't be read; it may be damaged.", { cause: err });
  } finally {
    await pdf.destroy().catch(() => {});
  }
}

async function openPdf(bytes: Uint8Array): Promise<PdfDocument> {
  try {
    return await getDocumentProxy(bytes, {
      isEvalSupported: false,
      useSystemFonts: false,
      disableFontFace: true,
      verbosity: 0,
    });
  } catch (err) {
    if ((err as Error)?.name === 'PasswordException')
      throw new ExtractError('unsupported', 'The PDF is password-protected; remove the password and upload it again.', { cause: err });
    throw new ExtractError('damaged', "The file isn't a readable PDF; it may be damaged.", { cause: err });
  }
}

async function readPages(pdf: PdfDocument, outOfRoom: (chars: number) => boolean): Promise<PdfText> {
  let text = '';
  const pageStarts: number[] = [];
  for (let n = 1; n <= pdf.numPages; n++) {
    if (outOfRoom(text.length)) return { text, pages: pdf.numPages, pageStarts, truncated: true };
    const page = await pdf.getPage(n);
    const content = await page.getTextContent();
    page.cleanup();
    const pageText = content.items
      .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
      .join('')
      .replace(/[^\S\n]+/g, ' ')
      .replace(/ ?\n ?/g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    if (text && pageText) text += '\n\n';
    pageStarts.push(text.length);
    text += pageText;
  }
  return { text, pages: pdf.numPages, pageStarts, truncated: false };
}
