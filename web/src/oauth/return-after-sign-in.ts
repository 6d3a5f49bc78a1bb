/**
 * Signing in leaves the page (an identity provider's round trip, or a login link) and lands on
 * `/`: the consent page an MCP client opened must come back afterwards, with its query. Kept ten
 * minutes in localStorage, so a login link opened in another tab finds it too; used once.
 */
const KEY = 'parley.returnAfterSignIn';
const KEEP_MS = 10 * 60 * 1000;

export function rememberReturn(): void {
  localStorage.setItem(KEY, JSON.stringify({ url: location.pathname + location.search, at: Date.now() }));
}

/** Where to go back to, once (only Parley's own consent page); undefined when nothing waits. */
export function takeReturn(): string | undefined {
  const raw = localStorage.getItem(KEY);
  if (!raw) return undefined;
  localStorage.removeItem(KEY);
  try {
    const { url, at } = JSON.parse(raw) as { url: string; at: number };
    return typeof url === 'string' && url.startsWith('/oauth/authorize?') && Date.now() - at < KEEP_MS ? url : undefined;
  } catch {
    return undefined;
  }
}
