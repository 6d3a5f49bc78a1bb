/**
 * Word documents through mammoth, whose raw-text mode keeps the paragraphs (a blank line between
 * each) and leaves images unread. Its ZIP library trusts the archive, so check-zip.ts vets it
 * first.
 */
import mammoth from 'mammoth';
import { checkZip } from './check-zip';
import { ExtractError } from './extract-error';
import type { ExtractLimits } from './extract-limits';

export async function readDocx(bytes: Uint8Array, limits: ExtractLimits): Promise<string> {
  checkZip(bytes, limits);
  try {
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
    return value.replace(/\n{3,}/g, '\n\n').trim();
  } catch (err) {
    throw new ExtractError('damaged', "The file isn't a readable Word document; it may be damaged.", { cause: err });
  }
}
