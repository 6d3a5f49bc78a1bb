import { useEffect, useState } from 'preact/hooks';

/** The app's places: a new chat (`/`), a conversation (`/c/<id>`), the user's sessions (`/sessions`); the server serves the page at each. */
export type Route = { name: 'new' } | { name: 'conversation'; id: string } | { name: 'sessions' };

export function routeOf(path: string): Route {
  if (path === '/sessions') return { name: 'sessions' };
  const m = /^\/c\/([^/]+)$/.exec(path);
  return m ? { name: 'conversation', id: decodeURIComponent(m[1]!) } : { name: 'new' };
}

/** Go somewhere in the app: a new visit (the view there starts afresh). */
export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

/**
 * Give the current view its address without a new visit: a new chat that just made its
 * conversation stays the same view (it is following the answer) while the address becomes `/c/<id>`.
 */
export function adoptAddress(path: string): void {
  history.replaceState(null, '', path);
  dispatchEvent(new Event(ADOPT));
}
const ADOPT = 'parley:adopt';

/** The route, and a visit number that changes when the user goes somewhere (not on `adoptAddress`). */
export function useRoute(): { route: Route; visit: number } {
  const [state, setState] = useState(() => ({ route: routeOf(location.pathname), visit: 0 }));
  useEffect(() => {
    const visit = () => setState((s) => ({ route: routeOf(location.pathname), visit: s.visit + 1 }));
    const adopt = () => setState((s) => ({ route: routeOf(location.pathname), visit: s.visit }));
    addEventListener('popstate', visit);
    addEventListener(ADOPT, adopt);
    return () => (removeEventListener('popstate', visit), removeEventListener(ADOPT, adopt));
  }, []);
  return state;
}

/** A link that changes the page without loading it again (a plain link for a new tab or a middle click). */
export function onLinkClick(path: string) {
  return (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(path);
  };
}
