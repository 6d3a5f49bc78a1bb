/**
 * The service worker (built by src/web/app-shell-files.ts) keeps the app's shell so it opens
 * without a network and can be installed. Registered after the page has loaded: it fetches the
 * shell again, which must not compete with the first load.
 */
export function registerServiceWorker(): void {
  if (!('serviceWorker' in navigator)) return;
  const register = () => navigator.serviceWorker.register('/sw.js').catch(() => undefined);
  if (document.readyState === 'complete') register();
  else addEventListener('load', register, { once: true });
}
