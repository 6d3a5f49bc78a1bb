import { AppError, forbidden } from './errors';
import { fromOwnOrigin } from './own-origin';

/** The part of an upload that carries the file (the wire form every upload shares, docs/api.md). */
export const UPLOAD_FILE_PART = 'file';

/**
 * What the pipeline checks of an upload row's request before its handler reads the body
 * (src/http/register.ts): the content type (415), the declared length against the row's body
 * limit (413, before one byte is read) and, for a browser's post, where it comes from (403).
 *
 * JSON bodies need no origin check: a page on another site cannot post JSON without a preflight.
 * A form can post `multipart/form-data` without one, so when the session cookie is the credential
 * the post must come from Parley's own pages (src/http/own-origin.ts: `Origin` required and this
 * server's, `Sec-Fetch-Site` same-origin when sent).
 */
export function checkUpload(request: Request, maxBodyBytes: number, publicUrl: string | undefined): void {
  const headers = request.headers;
  const type = headers.get('content-type');
  if (!type || !/^multipart\/form-data\s*;/i.test(type))
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', { message: `Content-Type must be multipart/form-data, with the file in a part named "${UPLOAD_FILE_PART}"` });
  const length = headers.get('content-length');
  if (length !== null && Number(length) > maxBodyBytes) throw new AppError('PAYLOAD_TOO_LARGE', { message: `The upload is larger than ${maxBodyBytes} bytes` });
  if (sentWithCookie(headers) && !fromOwnOrigin(request, publicUrl)) throw forbidden();
}

/** The credential `authenticate` used was the session cookie: no API key, no bearer token. */
function sentWithCookie(headers: Headers): boolean {
  if (headers.get('x-api-key')) return false;
  const auth = headers.get('authorization');
  return !(auth && /^Bearer\s+\S/i.test(auth));
}

/** The OpenAPI form of an upload's body: the row's fields (all text) and the file part. */
export function uploadSchema(fields: Record<string, unknown>): Record<string, unknown> {
  const properties = { [UPLOAD_FILE_PART]: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file' }, ...(fields.properties as object) };
  return { ...fields, properties, required: [UPLOAD_FILE_PART, ...((fields.required as string[] | undefined) ?? [])] };
}
