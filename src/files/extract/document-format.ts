/** The formats Parley reads as text, keyed by the upload's media type. */
export type DocumentFormat = 'pdf' | 'docx' | 'html' | 'markdown' | 'text' | 'csv' | 'json';

const formatOfType: Record<string, DocumentFormat> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/plain': 'text',
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'application/json': 'json',
  'text/json': 'json',
};

export interface MediaType {
  format: DocumentFormat | undefined;
  /** The media type without parameters, lower-cased: what an error message names. */
  essence: string;
  /** The `charset` parameter, if any (text formats only). */
  charset: string | undefined;
}

export function parseMediaType(mime: string): MediaType {
  const [head = '', ...params] = mime.split(';');
  const essence = head.trim().toLowerCase();
  let charset: string | undefined;
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name?.trim().toLowerCase() === 'charset' && value) charset = value.trim().replace(/^"|"$/g, '').toLowerCase();
  }
  const format = formatOfType[essence] ?? (essence.endsWith('+json') ? 'json' : undefined);
  return { format, essence, charset };
}

export const SUPPORTED_FORMATS_TEXT = 'PDF, Word (.docx), HTML, Markdown, plain text, CSV and JSON';
