import { useEffect, useState } from 'preact/hooks';

/**
 * The app's places; the server serves the page at each (src/web/web.routes.ts, WEB_PATHS):
 * a new chat (`/`), a conversation (`/c/<id>`), the user's sessions (`/sessions`), deep research
 * (`/research`, one run at `/research/<conversationId>`), group chats (`/groups`, one at
 * `/g/<groupChatId>`, an invite link at `/join/<token>`), settings (`/settings`), the admin
 * pages (`/admin`), the file library (`/files`), memories (`/memories`), the assistants (`/assistants`),
 * and the service's pages:
 * news (`/news`), support (`/support`, one conversation at `/support/<threadId>`), mini apps
 * (`/apps`) and release notes (`/whats-new`).
 */
export type Route =
  | { name: 'new' }
  | { name: 'conversation'; id: string }
  | { name: 'sessions' }
  | { name: 'research'; id?: string }
  | { name: 'groups' }
  | { name: 'group'; id: string }
  | { name: 'join'; token: string }
  | { name: 'settings' }
  | { name: 'admin' }
  | { name: 'files' }
  | { name: 'memories' }
  | { name: 'assistants' }
  | { name: 'news' }
  | { name: 'support'; id?: string }
  | { name: 'apps' }
  | { name: 'whats-new' };

const PLACES: [RegExp, (id: string) => Route][] = [
  [/^\/c\/([^/]+)$/, (id) => ({ name: 'conversation', id })],
  [/^\/research\/([^/]+)$/, (id) => ({ name: 'research', id })],
  [/^\/g\/([^/]+)$/, (id) => ({ name: 'group', id })],
  [/^\/join\/([^/]+)$/, (token) => ({ name: 'join', token })],
  [/^\/support\/([^/]+)$/, (id) => ({ name: 'support', id })],
];
const PAGES: Record<string, Route> = {
  '/sessions': { name: 'sessions' },
  '/research': { name: 'research' },
  '/groups': { name: 'groups' },
  '/settings': { name: 'settings' },
  '/admin': { name: 'admin' },
  '/files': { name: 'files' },
  '/memories': { name: 'memories' },
  '/assistants': { name: 'assistants' },
  '/news': { name: 'news' },
  '/support': { name: 'support' },
  '/apps': { name: 'apps' },
  '/whats-new': { name: 'whats-new' },
};

export function routeOf(path: string): Route {
  const page = PAGES[path];
  if (page) return page;
  for (const [pattern, route] of PLACES) {
    const m = pattern.exec(path);
    if (m) {
      // A mangled address (`/c/%E0`) is no place of the app: a new chat rather than a blank page.
      try {
        return route(decodeURIComponent(m[1]!));
      } catch {
        return { name: 'new' };
      }
    }
  }
  return { name: 'new' };
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
