/**
 * A local S3-compatible object store speaking the REST API that Bun's `S3Client` uses, path-style
 * (`/<bucket>/<key>`):
 * - `PUT` an object; `GET` it whole or one `Range` (206, `Content-Range`; 416 past the end);
 *   `HEAD`; `DELETE` (204, also for a key that is not there, as S3 answers; 404 with `strictDelete`).
 * - Multipart uploads, which Bun's client starts for a body of 5 MiB or more: `POST ?uploads`
 *   (`InitiateMultipartUploadResult`), `PUT ?partNumber&uploadId`, `POST ?uploadId` with the
 *   `CompleteMultipartUpload` list (each part's ETag checked), `DELETE ?uploadId` (abort).
 * - Every request must be signed with AWS Signature Version 4 for the configured access key: the
 *   signature is computed again here from the secret (canonical request, string to sign, derived
 *   key), so a wrong key, secret or region is refused with S3's own 403 errors.
 * Errors are S3's XML documents (`<Error><Code>NoSuchKey</Code>…`). Tests read the objects in
 * `objects`, what was sent in `requests`, and make requests fail with `refuse` (a store that is down).
 */
import { createHash, createHmac } from 'node:crypto';

export interface S3Request {
  method: string;
  /** The object's key (without the bucket), decoded. */
  key: string;
  /** The query string, e.g. `?uploads=` or `?partNumber=1&uploadId=…`. */
  query: string;
  range: string | null;
  /** The access key id of the request's signature. */
  accessKeyId: string;
  /** The region named in the signature's scope. */
  region: string;
  bodyBytes: number;
}

export interface FakeS3 {
  /** What PARLEY_FILES_S3_ENDPOINT takes: `http://127.0.0.1:<port>`. */
  url: string;
  bucket: string;
  objects: Map<string, Uint8Array>;
  requests: S3Request[];
  /** While set, a request it gives a status for is answered with that status and S3's `InternalError` (recorded in `requests` all the same). */
  refuse?: (req: S3Request) => number | undefined;
  /** Answer a DELETE of a key that is not there with 404 `NoSuchKey`, as some S3-compatible stores do (S3 itself: 204). */
  strictDelete: boolean;
  stop(): void;
}

export interface FakeS3Options {
  bucket?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
}

export function startFakeS3(opts: FakeS3Options = {}): FakeS3 {
  const bucket = opts.bucket ?? 'parley-test';
  const accessKeyId = opts.accessKeyId ?? 'FAKEACCESSKEY';
  const secret = opts.secretAccessKey ?? 'fake-secret-key';
  const objects = new Map<string, Uint8Array>();
  const uploads = new Map<string, { key: string; parts: Map<number, Uint8Array> }>();
  const requests: S3Request[] = [];
  let nextUpload = 1;

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.method === 'PUT' || req.method === 'POST' ? new Uint8Array(await req.arrayBuffer()) : new Uint8Array(0);
      const auth = checkSignature(req, url, body, accessKeyId, secret);
      if ('error' in auth) return s3Error(403, auth.error, auth.message);
      const [, bucketName, ...rest] = url.pathname.split('/');
      const key = rest.map(decodeURIComponent).join('/');
      const seen: S3Request = { method: req.method, key, query: url.search, range: req.headers.get('range'), accessKeyId: auth.accessKeyId, region: auth.region, bodyBytes: body.length };
      requests.push(seen);
      const refused = fake.refuse?.(seen);
      if (refused) return s3Error(refused, 'InternalError', 'We encountered an internal error. Please try again.');
      if (bucketName !== bucket) return s3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
      if (!key) return s3Error(400, 'InvalidRequest', 'This fake serves objects only.');
      const q = url.searchParams;

      if (req.method === 'POST' && q.has('uploads')) {
        const uploadId = `upload-${nextUpload++}`;
        uploads.set(uploadId, { key, parts: new Map() });
        return xml(`<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${escapeXml(key)}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`);
      }
      if (q.has('uploadId')) {
        const upload = uploads.get(q.get('uploadId')!);
        if (!upload || upload.key !== key) return s3Error(404, 'NoSuchUpload', 'The specified upload does not exist.');
        if (req.method === 'PUT') {
          const n = Number(q.get('partNumber'));
          if (!Number.isInteger(n) || n < 1 || n > 10_000) return s3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000.');
          upload.parts.set(n, body);
          return new Response(null, { headers: { etag: etagOf(body) } });
        }
        if (req.method === 'POST') return completeUpload(q.get('uploadId')!, upload, new TextDecoder().decode(body));
        if (req.method === 'DELETE') {
          uploads.delete(q.get('uploadId')!);
          return new Response(null, { status: 204 });
        }
      }
      if (req.method === 'PUT') {
        objects.set(key, body);
        return new Response(null, { headers: { etag: etagOf(body) } });
      }
      if (req.method === 'DELETE') {
        if (!objects.delete(key) && fake.strictDelete) return s3Error(404, 'NoSuchKey', 'The specified key does not exist.');
        return new Response(null, { status: 204 });
      }
      if (req.method === 'GET' || req.method === 'HEAD') {
        const object = objects.get(key);
        if (!object) return req.method === 'HEAD' ? new Response(null, { status: 404 }) : s3Error(404, 'NoSuchKey', 'The specified key does not exist.');
        return serveObject(object, req.headers.get('range'), req.method === 'HEAD');
      }
      return s3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
    },
  });

  function completeUpload(uploadId: string, upload: { key: string; parts: Map<number, Uint8Array> }, listXml: string): Response {
    const listed = [...listXml.matchAll(/<Part>\s*<PartNumber>(\d+)<\/PartNumber>\s*<ETag>([^<]+)<\/ETag>\s*<\/Part>/g)].map((m) => ({ n: Number(m[1]), etag: m[2]!.replace(/&quot;/g, '"') }));
    if (!listed.length) return s3Error(400, 'MalformedXML', 'The XML you provided was not well-formed.');
    for (let i = 0; i < listed.length; i++) {
      const { n, etag } = listed[i]!;
      if (i > 0 && n <= listed[i - 1]!.n) return s3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order.');
      const part = upload.parts.get(n);
      if (!part || etagOf(part) !== (etag.startsWith('"') ? etag : `"${etag}"`)) return s3Error(400, 'InvalidPart', 'One or more of the specified parts could not be found.');
      // S3's minimum part size, but for the last part.
      if (i < listed.length - 1 && part.length < 5 * 1024 * 1024) return s3Error(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.');
    }
    const whole = new Uint8Array(listed.reduce((sum, p) => sum + upload.parts.get(p.n)!.length, 0));
    let at = 0;
    for (const p of listed) {
      whole.set(upload.parts.get(p.n)!, at);
      at += upload.parts.get(p.n)!.length;
    }
    objects.set(upload.key, whole);
    uploads.delete(uploadId);
    return xml(`<CompleteMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${escapeXml(upload.key)}</Key><ETag>"${createHash('md5').update(whole).digest('hex')}-${listed.length}"</ETag></CompleteMultipartUploadResult>`);
  }

  const fake: FakeS3 = { url: `http://127.0.0.1:${server.port}`, bucket, objects, requests, strictDelete: false, stop: () => server.stop(true) };
  return fake;
}

function serveObject(object: Uint8Array, range: string | null, headOnly: boolean): Response {
  const headers = { etag: etagOf(object), 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
  const m = range?.match(/^bytes=(\d*)-(\d*)$/);
  if (!m || (m[1] === '' && m[2] === '')) return new Response(headOnly ? null : object, { headers: { ...headers, 'content-length': String(object.length) } });
  const size = object.length;
  const start = m[1] === '' ? Math.max(0, size - Number(m[2])) : Number(m[1]);
  const end = m[1] === '' || m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return s3Error(416, 'InvalidRange', 'The requested range is not satisfiable', { 'content-range': `bytes */${size}` });
  const part = object.subarray(start, end + 1);
  return new Response(headOnly ? null : part, { status: 206, headers: { ...headers, 'content-length': String(part.length), 'content-range': `bytes ${start}-${end}/${size}` } });
}

type SignatureCheck = { accessKeyId: string; region: string } | { error: string; message: string };

/**
 * AWS Signature Version 4 as S3 checks it: the `Authorization` header's credential scope and
 * signed headers, the payload hash (`UNSIGNED-PAYLOAD`, or the body's SHA-256), and the
 * signature itself computed again from the secret.
 */
function checkSignature(req: Request, url: URL, body: Uint8Array, expectedKeyId: string, secret: string): SignatureCheck {
  const header = req.headers.get('authorization') ?? '';
  const m = header.match(/^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/);
  if (!m) return { error: 'AccessDenied', message: 'Requests must be signed with AWS Signature Version 4.' };
  const [, keyId, date, region, signedHeaders, signature] = m as unknown as [string, string, string, string, string, string];
  if (keyId !== expectedKeyId) return { error: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
  const amzDate = req.headers.get('x-amz-date') ?? '';
  if (!amzDate.startsWith(date)) return { error: 'AccessDenied', message: 'The credential date does not match x-amz-date.' };
  const names = signedHeaders.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date')) return { error: 'AccessDenied', message: 'host and x-amz-date must be signed.' };
  const payloadHash = req.headers.get('x-amz-content-sha256') ?? '';
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== createHash('sha256').update(body).digest('hex'))
    return { error: 'XAmzContentSHA256Mismatch', message: "The provided 'x-amz-content-sha256' header does not match what was computed." };
  const canonicalRequest = [
    req.method,
    url.pathname,
    canonicalQuery(url),
    names.map((n) => `${n}:${(req.headers.get(n) ?? '').trim().replace(/\s+/g, ' ')}\n`).join(''),
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  let signingKey: Buffer = createHmac('sha256', `AWS4${secret}`).update(date).digest();
  for (const part of [region, 's3', 'aws4_request']) signingKey = createHmac('sha256', signingKey).update(part).digest();
  if (createHmac('sha256', signingKey).update(toSign).digest('hex') !== signature)
    return { error: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided.' };
  return { accessKeyId: keyId, region };
}

/** Parameters sorted by name, each name and value URI-encoded (RFC 3986 unreserved kept), `=` always present. */
function canonicalQuery(url: URL): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return [...url.searchParams]
    .map(([k, v]) => [enc(k), enc(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

const etagOf = (bytes: Uint8Array) => `"${createHash('md5').update(bytes).digest('hex')}"`;
const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const xml = (inner: string, status = 200) => new Response(`<?xml version="1.0" encoding="UTF-8"?>\n${inner}`, { status, headers: { 'content-type': 'application/xml' } });

function s3Error(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message><RequestId>fake</RequestId></Error>`, {
    status,
    headers: { 'content-type': 'application/xml', ...headers },
  });
}
