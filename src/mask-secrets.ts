/**
 * The one place that decides what of a URL is secret, for everything Parley prints: the settings
 * report, `parley doctor` and `admin/doctor`, the log, error messages that quote a URL, and
 * `parley db copy`. A URL's user name and password are secret whichever setting holds them
 * (`http://user:pass@searx`, a database URL), and so are query parameters named like a credential
 * (`?token=`, `api_key`, `X-Amz-Signature`, …): masked, the rest shown, so the admin still sees
 * which server is meant.
 */

/** What a secret is shown as: never its characters, nor its length. */
export const MASK = '********';

/**
 * Parameter names that carry a credential: the whole name, or one of its `_`/`-`/`.` parts, is
 * one of these words or ends in token, secret, password or key (`access_token`, `sslpassword`,
 * `private_key`); signed-URL schemes (`X-Amz-*`, `X-Goog-*`) wholly.
 */
const SECRET_WORD = /^(.*(token|secret|passw(or)?d|key)|pwd|pass|sig|signature|credentials?|auth|code|sas|session|sessionid)$/i;
const SIGNED_URL = /^x-(amz|goog)-/i;

export function isSecretParam(name: string): boolean {
  return SIGNED_URL.test(name) || SECRET_WORD.test(name) || name.split(/[_.-]/).some((part) => SECRET_WORD.test(part));
}

/** `url` with its user info and secret-looking query parameters masked; anything else as given. */
export function maskUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // Not a URL a parser takes (a bad setting): at least its user info goes.
    return url.replace(/(\/\/)[^/@]*@/, `$1${MASK}:${MASK}@`);
  }
  let masked = false;
  if (u.username) (u.username = MASK), (masked = true);
  if (u.password) (u.password = MASK), (masked = true);
  const params = [...u.searchParams.keys()].filter(isSecretParam);
  for (const name of new Set(params)) {
    u.searchParams.set(name, MASK);
    masked = true;
  }
  return masked ? u.toString() : url;
}

// A URL inside free text: a scheme, `://`, then up to whitespace, a quote or an angle bracket.
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`\\]+/gi;

/** Free text (a message, a log line, a check's detail) with every URL in it masked by `maskUrl`. */
export function maskSecretsIn(text: string): string {
  // Most text quotes no URL: one scan, no allocation.
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (found) => {
    // A sentence's own punctuation after the URL is not part of it.
    const url = found.replace(/[.,;:)\]]+$/, '');
    return maskUrl(url) + found.slice(url.length);
  });
}
