import type { Logger } from '../log';
import { AppError, errorResponse } from './errors';
import { logRequest, pathOf, startRequest, stampResponse } from './request-stamp';

const SLASH = 47;

/**
 * Bun gives `request.url` as the path alone ("/api/health?x=1") when a request names no usable
 * host: HTTP/1.0 without a Host header (HAProxy's default health check), an empty Host, or a Host
 * that is no host name at all ("a b", "a|b"). The router and `new URL()` need an absolute URL, so
 * such a request would be routed by the wrong part of its path.
 *
 * One character is checked per request; the rare request that fails it pays for the rest. A
 * request without a Host, or with an empty one (RFC 9112 allows both), is for this server and is
 * served under the origin Parley listens on. A Host that is present but invalid is refused with
 * 400, as RFC 9112 §3.2 requires.
 */
export function serveWithHost(
  request: Request,
  origin: string,
  handle: (request: Request) => Response | Promise<Response>,
  log: Logger,
): Response | Promise<Response> {
  const url = request.url;
  if (url.charCodeAt(0) !== SLASH) return handle(request);
  if (request.headers.get('host')) return invalidHost(request, url, log);
  // The copy keeps the body stream and the client's abort signal.
  return handle(new Request(origin + url, request));
}

/** The answer to a request whose Host is no host (RFC 9112 §3.2: 400). */
export const invalidHostError = () => new AppError('BAD_REQUEST', { message: 'Invalid Host header' });

function invalidHost(request: Request, url: string, log: Logger): Response {
  const stamp = startRequest();
  const res = stampResponse(errorResponse(invalidHostError()), stamp);
  logRequest(log, request, res.status, stamp, pathOf(url));
  return res;
}
