import { useEffect, useState } from 'preact/hooks';

/** The app's two places: a new chat (`/`) and a conversation (`/c/<id>`); the server serves the page at both. */
export type Route = { name: 'new' } | { name: 'conversation'; id: string };

export function routeOf(path: string): Route {
  const m = /^\/c\/([^/]+)$/.exec(path);
  return m ? { name: 'conversation', id: decodeURIComponent(m[1]!) } : { name: 'new' };
}

export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.pathname));
  useEffect(() => {
    const update = () => setRoute(routeOf(location.pathname));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return route;
}

/** A link that changes the page without loading it again (a plain link for a new tab or a middle click). */
export function onLinkClick(path: string) {
  return (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(path);
  };
}
