import type { AppDeps } from '../deps';
import type { Config } from '../config';
import type { Session } from '../db/schema';
import { DAY_MS } from '../time';
import { createSession } from './auth.store';
import { sessionCookie, SESSION_COOKIE_MAX_AGE_S } from './authenticate';

/**
 * How every browser sign-in ends (the OAuth callback, a login link): a session named after the
 * browser, and the `parley_session` cookie on the answer's headers.
 */
export function openBrowserSession(deps: AppDeps, request: Request, userId: string): Promise<{ token: string; row: Session }> {
  const userAgent = request.headers.get('user-agent')?.slice(0, 300);
  return deps.store.write((tx) => createSession(tx, userId, deps.config.sessionTtlDays * DAY_MS, { userAgent }, deps.now()));
}

export const setSessionCookie = (headers: Headers, token: string, config: Config) =>
  headers.append('set-cookie', sessionCookie(token, SESSION_COOKIE_MAX_AGE_S, config.cookieSecure));

/**
 * Where a browser goes once signed in, or with `?error=<code>` when it was not: PARLEY_APP_URL,
 * else the web app when this server serves it (`/`), else nowhere (the caller shows a page).
 */
export function browserLanding(config: Config, error?: string): string | undefined {
  if (config.appUrl) {
    if (!error) return config.appUrl;
    const url = new URL(config.appUrl);
    url.searchParams.set('error', error);
    return url.href;
  }
  if (!config.web) return undefined;
  return error ? `/?error=${encodeURIComponent(error)}` : '/';
}
