/**
 * The sign-in flow happens in a browser, mid-navigation: it ends on a redirect or on this small
 * self-contained page, never on a JSON envelope or a stack trace.
 */

export const OAUTH_ERRORS = {
  unknown_provider: { status: 404, message: 'This sign-in provider is not configured on this server.' },
  invalid_redirect: { status: 400, message: 'The app asked to come back to an address this server does not allow.' },
  invalid_state: { status: 400, message: 'This sign-in link expired or was not started from this browser. Please start again.' },
  access_denied: { status: 403, message: 'Sign-in was cancelled at the identity provider.' },
  provider_error: { status: 502, message: 'The identity provider did not complete the sign-in. Please try again later.' },
  email_not_verified: { status: 403, message: 'The identity provider did not confirm a verified e-mail address for this account.' },
  signup_closed: { status: 403, message: 'There is no account for this e-mail address, and sign-up is closed.' },
  signup_not_allowed: { status: 403, message: 'This e-mail address may not sign up on this server.' },
  server_error: { status: 500, message: 'Something went wrong on this server. Please try again later.' },
  no_public_url: {
    status: 503,
    message: "This server does not know the address it is reached at, so it cannot sign you in with an identity provider. Its administrator must set PARLEY_PUBLIC_URL.",
  },
} as const;

export type OAuthErrorCode = keyof typeof OAUTH_ERRORS;

export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}code{font:14px ui-monospace,monospace;background:#f3f3f3;padding:.1rem .3rem}</style>
</head><body><h1>${esc(title)}</h1>${body}</body></html>`;
}

export const NO_STORE = { 'cache-control': 'no-store' };

/** A small self-contained HTML page, never stored by a cache (it carries a sign-in's outcome). */
export function htmlPage(status: number, title: string, body: string, extraHeaders?: Headers): Response {
  const headers = new Headers(extraHeaders);
  headers.set('content-type', 'text/html; charset=utf-8');
  for (const [k, v] of Object.entries(NO_STORE)) headers.set(k, v);
  return new Response(page(title, body), { status, headers });
}

/** A redirect that no cache keeps; 303 after a form's POST, so the browser follows with a GET. */
export function redirect(to: URL | string, headers = new Headers(), status = 302): Response {
  headers.set('location', String(to));
  for (const [k, v] of Object.entries(NO_STORE)) headers.set(k, v);
  return new Response(null, { status, headers });
}

export function errorPage(code: OAuthErrorCode, extraHeaders?: Headers): Response {
  const { status, message } = OAUTH_ERRORS[code];
  return htmlPage(status, 'Sign-in failed', `<p>${esc(message)}</p><p>Error code: <code>${code}</code></p>`, extraHeaders);
}

export function signedInPage(email: string, headers: Headers): Response {
  return htmlPage(200, 'Signed in', `<p>You are signed in as <strong>${esc(email)}</strong>. You can close this window.</p>`, headers);
}
