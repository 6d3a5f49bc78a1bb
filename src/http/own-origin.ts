/**
 * Whether a browser's POST comes from Parley's own pages, for the requests a session cookie alone
 * may authorise without a preflight: uploads (`multipart/form-data`) and the login link's button
 * (a form). A page of another site can send both, and `SameSite=Lax` gives a sibling subdomain
 * the cookie, so the request must say where it comes from:
 *
 * - `Origin` is required and must be this server's own: the address the request came to, or
 *   `PARLEY_PUBLIC_URL`'s. Browsers send it with every POST (the Fetch standard), so a request
 *   without it is not one of Parley's pages; `null` (sandboxed frames, `no-referrer` pages) is no
 *   origin either.
 * - `Sec-Fetch-Site`, when the browser sends it, must be `same-origin`: `cross-site` and
 *   `same-site` are another site's page whatever `Origin` says.
 *
 * Requests with an API key or a bearer token are not asked: browsers never send those on their own.
 */
export function fromOwnOrigin(request: Request, publicUrl: string | undefined): boolean {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin') return false;
  const origin = request.headers.get('origin');
  if (origin === null) return false;
  if (publicUrl && origin === new URL(publicUrl).origin) return true;
  return URL.canParse(request.url) && origin === new URL(request.url).origin;
}
