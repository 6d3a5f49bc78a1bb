/** What a mini app may be, for the CLI that adds them (and any later admin operation). */

export const MINI_APP_NAME_MAX_CHARS = 100;
export const MINI_APP_DESCRIPTION_MAX_CHARS = 500;
export const MINI_APP_URL_MAX_CHARS = 2048;
export const MINI_APP_POSITION_MAX = 1_000_000;

export class MiniAppRefusal extends Error {}

/** The hosts for which plain http is allowed: the admin's own machine, for developing an app. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(hostname) || hostname === '[::1]';
}

/**
 * An app's (or its icon's) address: https, or http to this machine only. Apps open it in a web
 * view with the user signed in to them, so a plain-http page elsewhere could be altered on the
 * way; user names and passwords in the URL would be handed to every user.
 */
export function checkMiniAppUrl(raw: string, option: string): string {
  const text = raw.trim();
  if (text.length > MINI_APP_URL_MAX_CHARS) throw new MiniAppRefusal(`${option} must be at most ${MINI_APP_URL_MAX_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new MiniAppRefusal(`${option} must be an absolute URL (https://…), got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new MiniAppRefusal(`${option} must be an https URL (http only for localhost), got ${JSON.stringify(raw)}`);
  if (url.username || url.password) throw new MiniAppRefusal(`${option} must not carry a user name or password`);
  return url.href;
}

export function checkMiniAppName(raw: string): string {
  const name = raw.trim();
  if (!name) throw new MiniAppRefusal('--name must not be blank');
  if (/[\r\n\t]/.test(name)) throw new MiniAppRefusal('--name must be one line');
  if ([...name].length > MINI_APP_NAME_MAX_CHARS) throw new MiniAppRefusal(`--name must be at most ${MINI_APP_NAME_MAX_CHARS} characters`);
  return name;
}

/** Empty clears the description. */
export function checkMiniAppDescription(raw: string): string | null {
  const description = raw.trim();
  if ([...description].length > MINI_APP_DESCRIPTION_MAX_CHARS) throw new MiniAppRefusal(`--description must be at most ${MINI_APP_DESCRIPTION_MAX_CHARS} characters`);
  return description || null;
}

export function checkMiniAppPosition(raw: string): number {
  // Digits only: Number() would also take "0x10", "1e3" or " 5 ".
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n > MINI_APP_POSITION_MAX) throw new MiniAppRefusal(`--position must be an integer from 0 to ${MINI_APP_POSITION_MAX}, got ${raw}`);
  return n;
}

/** Names are unique regardless of case: this is the key the unique index holds. */
export const nameKeyOf = (name: string): string => name.toLowerCase();
