import { generateCodeVerifier, generateState } from 'arctic';
import { timingSafeEqual } from 'node:crypto';
import type { AppDeps } from '../deps';
import { iso } from '../ids';
import { readCookie } from './authenticate';
import { browserLanding, openBrowserSession, setSessionCookie } from './browser-session';
import { buildProvider, isProviderId, type OAuthProvider } from './oauth.providers';
import { errorPage, redirect, signedInPage, type OAuthErrorCode } from './oauth.page';
import { findOrCreateUser } from './signup';

/**
 * The browser side of signing in: `startSignIn` sends the browser to the provider, `finishSignIn`
 * takes it back, checks the state, exchanges the code (PKCE), reads the verified e-mail, finds or
 * creates the user and opens a session. Every failure ends on a redirect or page with an error code.
 */

const COOKIE_PATH = '/api/auth/oauth';
const FLOW_COOKIE_SECONDS = 600;
const EXCHANGE_TIMEOUT_MS = 15_000;
const STATE = 'parley_oauth_state';
const VERIFIER = 'parley_oauth_verifier';
const REDIRECT = 'parley_oauth_redirect';

function flowCookie(name: string, value: string, maxAge: number, secure: boolean): string {
  return [`${name}=${encodeURIComponent(value)}`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`, ...(secure ? ['Secure'] : [])].join('; ');
}

function cookieOf(request: Request, name: string): string | undefined {
  try {
    return readCookie(request.headers.get('cookie'), name) || undefined;
  } catch {
    return undefined; // a malformed %-escape reads as no cookie
  }
}

/**
 * The provider, with the callback URL built from PARLEY_PUBLIC_URL only. Never from the request:
 * its Host header is whatever the client sent, and behind a TLS proxy its scheme is http, so a
 * callback built from it can point the provider (and the user's code) at another host, or fail
 * the provider's exact match. Trusting X-Forwarded-* instead would need a list of trusted proxies,
 * one more setting to get right; the public URL is needed at the provider's console anyway.
 */
function providerFor(deps: AppDeps, id: string): OAuthProvider | OAuthErrorCode {
  if (!isProviderId(id)) return 'unknown_provider';
  const { publicUrl } = deps.config;
  const provider = buildProvider(deps.config, id, `${publicUrl}/api/auth/oauth/${id}/callback`);
  if (!provider) return 'unknown_provider';
  return publicUrl ? provider : 'no_public_url';
}

/** A native app's return address: a custom scheme from the allow-list, checked again on the way back. */
function nativeRedirect(deps: AppDeps, raw: string | undefined): URL | undefined {
  if (!raw) return undefined;
  try {
    const url = new URL(raw);
    return deps.config.nativeRedirectSchemes.includes(url.protocol.slice(0, -1).toLowerCase()) ? url : undefined;
  } catch {
    return undefined;
  }
}

const sameString = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** `GET /api/auth/oauth/:provider[?redirect=myapp://…]` */
export function startSignIn(deps: AppDeps, request: Request, id: string): Response {
  const provider = providerFor(deps, id);
  if (typeof provider === 'string') return errorPage(provider);
  const requested = new URL(request.url).searchParams.get('redirect') ?? undefined;
  const native = nativeRedirect(deps, requested);
  // Never send anyone to an address that is not on the list, not even with an error.
  if (requested !== undefined && !native) return errorPage('invalid_redirect');

  const state = generateState();
  const verifier = generateCodeVerifier();
  const secure = deps.config.cookieSecure;
  const headers = new Headers();
  headers.append('set-cookie', flowCookie(STATE, `${provider.id}:${state}`, FLOW_COOKIE_SECONDS, secure));
  headers.append('set-cookie', flowCookie(VERIFIER, verifier, FLOW_COOKIE_SECONDS, secure));
  // A web sign-in clears a native return address left over from an abandoned attempt.
  headers.append('set-cookie', flowCookie(REDIRECT, native ? native.href : '', native ? FLOW_COOKIE_SECONDS : 0, secure));
  return redirect(provider.authorizationUrl(state, verifier), headers);
}

class FlowError extends Error {
  constructor(readonly code: OAuthErrorCode, cause?: unknown) {
    super(code, { cause });
  }
}

/** For the log only: the cause of a failed sign-in (provider answers, network errors), never sent to the browser. */
const describe = (cause: unknown, stack = false) =>
  cause instanceof Error ? `${cause.name}: ${cause.message}${stack && cause.stack ? `\n${cause.stack}` : ''}` : cause === undefined ? undefined : String(cause);

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** `GET /api/auth/oauth/:provider/callback?code&state` (or `?error` from the provider). */
export async function finishSignIn(deps: AppDeps, request: Request, id: string): Promise<Response> {
  const { config, log } = deps;
  const headers = new Headers();
  for (const name of [STATE, VERIFIER, REDIRECT]) headers.append('set-cookie', flowCookie(name, '', 0, config.cookieSecure));
  const native = nativeRedirect(deps, cookieOf(request, REDIRECT));
  const provider = providerFor(deps, id);
  if (typeof provider === 'string') return errorPage(provider, headers);

  try {
    const query = new URL(request.url).searchParams;
    const state = query.get('state');
    const expected = cookieOf(request, STATE);
    const verifier = cookieOf(request, VERIFIER);
    if (!state || !expected || !verifier || !sameString(expected, `${provider.id}:${state}`)) throw new FlowError('invalid_state');
    const providerError = query.get('error');
    if (providerError) throw new FlowError(providerError === 'access_denied' ? 'access_denied' : 'provider_error', `provider answered ${providerError}`);
    const code = query.get('code');
    if (!code) throw new FlowError('provider_error', 'no code in the callback');

    let profile;
    try {
      const tokens = await withTimeout(provider.exchangeCode(code, verifier), EXCHANGE_TIMEOUT_MS);
      profile = await provider.fetchProfile(tokens);
    } catch (err) {
      throw new FlowError('provider_error', err);
    }
    if (!profile.email || !profile.emailVerified) throw new FlowError('email_not_verified');
    const found = await findOrCreateUser(deps.store, config, { ...profile, email: profile.email }, deps.now());
    if ('refusal' in found) throw new FlowError(found.refusal);

    const { token, row } = await openBrowserSession(deps, request, found.user.id);
    log.info('signed in', { provider: provider.id, userId: found.user.id, sessionId: row.id, native: Boolean(native) });
    if (native) {
      native.searchParams.set('token', token);
      native.searchParams.set('expiresAt', iso(row.expiresAt));
      return redirect(native, headers);
    }
    setSessionCookie(headers, token, config);
    const landing = browserLanding(config);
    return landing ? redirect(landing, headers) : signedInPage(found.user.email, headers);
  } catch (err) {
    const code = err instanceof FlowError ? err.code : 'server_error';
    if (err instanceof FlowError) log.warn('sign-in failed', { provider: provider.id, code, cause: describe(err.cause) });
    else log.error('sign-in failed', { provider: provider.id, code, cause: describe(err, true) });
    if (native) {
      native.searchParams.set('error', code);
      return redirect(native, headers);
    }
    const landing = browserLanding(config, code);
    return landing ? redirect(landing, headers) : errorPage(code, headers);
  }
}
