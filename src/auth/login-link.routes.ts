import { Elysia } from 'elysia';
import type { AppDeps } from '../deps';
import { findUserById } from '../account/account.store';
import { pageRoute } from '../http/register';
import { fromOwnOrigin } from '../http/own-origin';
import { browserLanding, openBrowserSession, setSessionCookie } from './browser-session';
import { peekLoginLink, redeemLoginLink, type LoginLinkState } from './login-link.store';
import { esc, htmlPage, redirect, signedInPage } from './oauth.page';

/**
 * `parley login-link` makes a one-time sign-in link for a server without an identity provider
 * (docs/web.md). Opening it (GET) only shows a button; the POST of that button uses the link up
 * and signs the browser in. A GET that signed in would be spent by whatever fetches the link
 * first: mail and chat scanners open links to check them, and the user's own click would then
 * find it used.
 */
export const LOGIN_LINK_PATH = '/api/auth/login-link';

const MAX_FORM_BYTES = 4096;

const REFUSALS = {
  malformed: { status: 400, title: 'This sign-in link is not valid', text: 'Check that the whole link was copied, or ask your administrator for a new one.' },
  unknown: { status: 404, title: 'This sign-in link is not valid', text: 'Check that the whole link was copied, or ask your administrator for a new one.' },
  used: { status: 410, title: 'This sign-in link was already used', text: 'A sign-in link works once. Ask your administrator for a new one.' },
  expired: { status: 410, title: 'This sign-in link has expired', text: 'Sign-in links are valid for a few minutes. Ask your administrator for a new one.' },
  foreign: { status: 403, title: 'Sign-in refused', text: "The sign-in did not come from the link's own page. Open the link yourself and press the button." },
} as const;

/** What `parley login-link` makes: `pl_` and 256 bits in base64url. Anything else is a cut or mangled link. */
const TOKEN = /^pl_[A-Za-z0-9_-]{43}$/;

function refusal(reason: keyof typeof REFUSALS): Response {
  const { status, title, text } = REFUSALS[reason];
  return htmlPage(status, title, `<p>${esc(text)}</p><p>An administrator makes one with <code>parley login-link --email you@example.org</code>.</p>`);
}

function confirmPage(token: string, email: string): Response {
  return htmlPage(
    200,
    'Sign in to Parley',
    `<p>Sign in as <strong>${esc(email)}</strong>?</p>
<form method="post" action="${LOGIN_LINK_PATH}"><input type="hidden" name="token" value="${esc(token)}"><button type="submit">Sign in</button></form>
<p>The link works once and only for a few minutes.</p>`,
  );
}

const emailOf = async (deps: AppDeps, state: LoginLinkState) => (state.ok ? (await deps.store.read((tx) => findUserById(tx, state.link.userId)))?.email : undefined);

/** `GET ?token=…`: the page with the button, or why the link cannot be used. Nothing is used up. */
async function showLink(deps: AppDeps, request: Request): Promise<Response> {
  const token = new URL(request.url).searchParams.get('token') ?? '';
  if (!TOKEN.test(token)) return refusal('malformed');
  const state = await deps.store.read((tx) => peekLoginLink(tx, token, deps.now()));
  const email = await emailOf(deps, state);
  if (!state.ok) return refusal(state.reason);
  return email ? confirmPage(token, email) : refusal('unknown');
}

/**
 * `POST token=…` (the button): uses the link up, opens a session, sets the cookie, lands on the
 * app. A form posted from another site would sign the victim's browser into the sender's account
 * (login CSRF), so the post must come from the link's own page (src/http/own-origin.ts).
 */
async function useLink(deps: AppDeps, request: Request): Promise<Response> {
  if (!fromOwnOrigin(request, deps.config.publicUrl)) return refusal('foreign');
  const declared = Number(request.headers.get('content-length') ?? 0);
  const body = declared > MAX_FORM_BYTES ? '' : (await request.text()).slice(0, MAX_FORM_BYTES);
  const token = new URLSearchParams(body).get('token') ?? '';
  if (!TOKEN.test(token)) return refusal('malformed');
  const state = await deps.store.write((tx) => redeemLoginLink(tx, token, deps.now()));
  if (!state.ok) return refusal(state.reason);
  const user = await deps.store.read((tx) => findUserById(tx, state.link.userId));
  if (!user) return refusal('unknown');
  const { token: session, row } = await openBrowserSession(deps, request, user.id);
  deps.log.info('signed in', { via: 'login link', userId: user.id, sessionId: row.id, linkId: state.link.id });
  const headers = new Headers();
  setSessionCookie(headers, session, deps.config);
  const landing = browserLanding(deps.config);
  return landing ? redirect(landing, headers, 303) : signedInPage(user.email, headers);
}

export function loginLinkRoutes(deps: AppDeps) {
  type Ctx = { request: Request };
  return new Elysia({ name: 'login-link' })
    .get(LOGIN_LINK_PATH, async (ctx: Ctx) => {
      const res = await pageRoute<Ctx>(deps, ({ request }) => showLink(deps, request))(ctx);
      // With the API's `no-referrer`, a browser posts the form with `Origin: null`, which the
      // POST must refuse (sandboxed frames send it too). `same-origin` sends the real origin to
      // this server only; the Referer it adds goes nowhere else.
      res.headers.set('referrer-policy', 'same-origin');
      return res;
    })
    // Parley reads the form itself (bounded); Elysia must not read the body first.
    .post(LOGIN_LINK_PATH, pageRoute<Ctx>(deps, ({ request }) => useLink(deps, request)), { parse: 'none' });
}

/** OpenAPI entries for the two browser routes (pages, not operations). */
export const loginLinkOpenApiPaths = {
  [LOGIN_LINK_PATH]: {
    get: {
      operationId: 'auth.loginLinkShow',
      tags: ['auth'],
      summary: 'A one-time sign-in link made with `parley login-link` (browser navigation)',
      description: 'Shows a page with a button that posts the token back; opening the link uses nothing up (mail scanners fetch links). An unknown, used or expired link shows a page saying which.',
      security: [],
      parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
      responses: {
        200: { description: 'HTML page with the sign-in button' },
        400: { description: 'HTML page: no token, or not one `parley login-link` makes' },
        404: { description: 'HTML page: unknown link' },
        410: { description: 'HTML page: used or expired link' },
      },
    },
    post: {
      operationId: 'auth.loginLinkUse',
      tags: ['auth'],
      summary: 'Use a one-time sign-in link up and sign the browser in',
      description: 'A form post (`token=…`). Sets the session cookie and redirects (303) to `PARLEY_APP_URL`, else to the web app at `/`, else shows a page. A post without this server\'s own `Origin` (another site\'s, `null`, none), or with `Sec-Fetch-Site` other than `same-origin`, is refused (403 page).',
      security: [],
      requestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] } } } },
      responses: {
        303: { description: 'To the app, signed in' },
        400: { description: 'HTML page: no token, or not one `parley login-link` makes' },
        403: { description: 'HTML page: not posted from the link\'s own page (no or another `Origin`, `Sec-Fetch-Site` not `same-origin`)' },
        404: { description: 'HTML page: unknown link' },
        410: { description: 'HTML page: used or expired link' },
      },
    },
  },
};
