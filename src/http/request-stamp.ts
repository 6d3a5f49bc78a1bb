import type { Logger } from '../log';
import { securityHeaders } from './security-headers';

/**
 * What every response gets — the security headers and an `x-request-id` — and the one request
 * line per response in the log. Each route calls these itself instead of going through Elysia's
 * `onRequest`/`onAfterResponse` hooks: with those hooks registered, Elysia builds a fuller
 * context and merges headers on every request, which cost about a third of the throughput of
 * an authenticated operation (bench/RESULTS.md, change 8).
 */
export interface RequestStamp {
  id: string;
  start: number;
}

export const startRequest = (): RequestStamp => ({ id: crypto.randomUUID(), start: performance.now() });

const jsonHeaders = new Headers({ 'content-type': 'application/json', ...securityHeaders });

/**
 * A JSON answer built by Parley itself. The Response copies a prepared `Headers` (cheaper than
 * building eight headers from an object literal on every request), then gets its request id.
 */
export function stampedJson(body: string, stamp: RequestStamp, extra?: Record<string, string>): Response {
  const res = new Response(body, { status: 200, headers: jsonHeaders });
  const headers = res.headers;
  headers.set('x-request-id', stamp.id);
  if (extra) for (const name in extra) headers.set(name, extra[name]!);
  return res;
}

const securityEntries = Object.entries(securityHeaders);

/** Add the headers to a response something else built (an error envelope, a handler's Response). */
export function stampResponse(res: Response, stamp: RequestStamp): Response {
  for (const [name, value] of securityEntries) res.headers.set(name, value);
  res.headers.set('x-request-id', stamp.id);
  return res;
}

/** The same headers for a response Elysia builds (an event stream): set them on its `set.headers`. */
export function stampStreamHeaders(headers: Record<string, unknown>, stamp: RequestStamp): void {
  Object.assign(headers, securityHeaders);
  headers['x-request-id'] = stamp.id;
}

/**
 * Path of a request URL without `new URL()`: the log needs only the path, never the query. The
 * path starts at the first "/" after the scheme's "//" whatever the host's length, or at once
 * when the URL is the path alone (Bun's form for a request without a usable Host).
 */
export function pathOf(url: string): string {
  const slash = url.charCodeAt(0) === 47 ? 0 : url.indexOf('/', url.indexOf('//') + 2);
  if (slash < 0) return '/';
  const q = url.indexOf('?', slash);
  return q < 0 ? url.slice(slash) : url.slice(slash, q);
}

/** One line per request: method, path (no query string, no headers), status, time, id. */
export function logRequest(log: Logger, request: Request, status: number, stamp: RequestStamp, path = pathOf(request.url)): void {
  log.info('request', {
    method: request.method,
    path,
    status,
    ms: Math.round((performance.now() - stamp.start) * 10) / 10,
    requestId: stamp.id,
  });
}
