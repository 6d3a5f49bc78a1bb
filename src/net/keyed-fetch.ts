/**
 * Credentials go to the origin they were meant for, and nowhere else (docs/security.md, "Keys
 * and redirects"). A request that carries a key (an `Authorization` header, an API-key header, a
 * cookie, or a user and password in its URL) may be answered with a redirect to another origin:
 * a misconfigured proxy, a moved server, or a compromised one fishing for the key. Two answers,
 * by what the request is:
 *
 * - `refuse` (`keyedFetch`): a call to a server the admin configured (AI, embeddings, images and
 *   speech servers, SearxNG, an OAuth provider's user info). The configured address is the one
 *   trusted with the key and with what the request carries (a conversation, a recording); a
 *   redirect elsewhere is answered with `CrossOriginRedirectError`, and the admin sets the address
 *   the server really answers at. Redirects within the origin are followed.
 * - `strip` (`redirectHop`, used by `safeFetch`): fetching a URL a server handed back (an image
 *   left on a CDN) or one a user chose. Following is the point, so the hop is followed without
 *   any credential: once a request has left its first origin, no later hop gets one back.
 *
 * Redirects are handled here by hand rather than by the runtime (`redirect: 'manual'`), so the
 * rule does not depend on which headers a runtime's fetch happens to drop: Bun drops
 * `Authorization` on a cross-origin redirect, but not `x-api-key`, and still re-sends the body.
 */

export type CrossOrigin = 'refuse' | 'strip';

/** A redirect to another origin refused for a request that carries a credential. */
export class CrossOriginRedirectError extends Error {
  constructor(
    readonly from: string,
    readonly to: string,
  ) {
    super(`a redirect from ${from} to another origin (${to}) was not followed: credentials go to the configured origin only`);
    this.name = 'CrossOriginRedirectError';
  }
}

/** Headers that carry a credential; dropped when a request leaves its first origin. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'api-key', 'x-goog-api-key', 'x-auth-token', 'x-amz-security-token'];
/** Headers that describe a body; dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

export interface Hop {
  url: URL;
  method: string;
  headers: Headers;
  body?: RequestInit['body'];
}

export const isRedirect = (status: number) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308;

/**
 * The request a redirect asks for, from the hop that got it: method and body as the Fetch
 * standard rewrites them (303, and 301/302 after a POST, become a GET without a body; 307/308 keep
 * both), and, once the target's origin is not `origin` (the first request's), no credential.
 */
export function redirectHop(hop: Hop, status: number, location: string, origin: string, crossOrigin: CrossOrigin): Hop {
  const url = new URL(location, hop.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`a redirect to ${url.protocol} is not followed`);
  const headers = new Headers(hop.headers);
  let { method, body } = hop;
  if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
    method = 'GET';
    body = undefined;
    for (const h of BODY_HEADERS) headers.delete(h);
  }
  if (url.origin !== origin) {
    if (crossOrigin === 'refuse') throw new CrossOriginRedirectError(origin, url.origin);
    for (const h of CREDENTIAL_HEADERS) headers.delete(h);
    url.username = '';
    url.password = '';
  }
  return { url, method, headers, body };
}

/** A body that can be sent again on a 307/308 (a stream cannot). */
const replayable = (body: RequestInit['body']) => !(body instanceof ReadableStream);

/**
 * A fetch for a client that carries a key (`typeof fetch`, so it can be the openai SDK's `fetch`
 * option): redirects within the first request's origin are followed, one to another origin throws
 * `CrossOriginRedirectError`. `base` is the fetch underneath (one without Bun's idle timer, for
 * AI streams). A caller that asks for `redirect: 'manual'` or `'error'` gets exactly that.
 */
export function keyedFetch(base: typeof fetch = fetch, maxRedirects = 5): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    if (init.redirect === 'manual' || init.redirect === 'error') return base(input, init);
    const request = input instanceof Request ? input : undefined;
    let hop: Hop = {
      url: new URL(request ? request.url : input.toString()),
      method: (init.method ?? request?.method ?? 'GET').toUpperCase(),
      headers: new Headers(init.headers ?? request?.headers),
      body: init.body ?? (request?.body ? await request.arrayBuffer() : undefined),
    };
    const origin = hop.url.origin;
    for (let redirects = 0; ; redirects++) {
      const res = await base(hop.url, { ...init, method: hop.method, headers: hop.headers, body: hop.body, redirect: 'manual' });
      const location = res.headers.get('location');
      if (!isRedirect(res.status) || !location) return res;
      await res.body?.cancel();
      if (redirects >= maxRedirects) throw new TypeError(`more than ${maxRedirects} redirects from ${origin}`);
      const next = redirectHop(hop, res.status, location, origin, 'refuse');
      if (next.body != null && !replayable(next.body)) throw new TypeError(`a ${res.status} redirect asks to send a streamed body again, which Parley cannot`);
      hop = next;
    }
  }) as typeof fetch;
}

/** The refused redirect behind an error (the openai SDK wraps what its fetch throws as a connection error's cause). */
export function refusedRedirectOf(err: unknown): CrossOriginRedirectError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) if (e instanceof CrossOriginRedirectError) return e;
  return undefined;
}

/** What a user is told when a configured server redirected elsewhere (its address and the target stay in the log). */
export const refusedRedirectMessage = (server: string, setting: string) =>
  `${server} redirected Parley to another address, which Parley does not follow: its key goes to the configured address only (${setting}).`;
