import { useEffect, useState } from 'preact/hooks';
import { call, type User } from '../shared/api';
import { onLinkClick, type Route } from '../shared/router';

/** The top bar's places: the view names each one covers (for `aria-current`). */
const PLACES: { path: string; label: string; names: Route['name'][]; admin?: boolean; badge?: 'news' | 'support' }[] = [
  { path: '/', label: 'Chat', names: ['new', 'conversation'] },
  { path: '/research', label: 'Research', names: ['research'] },
  { path: '/groups', label: 'Groups', names: ['groups', 'group', 'join'] },
  { path: '/files', label: 'Files', names: ['files'] },
  { path: '/memories', label: 'Memories', names: ['memories'] },
  { path: '/apps', label: 'Apps', names: ['apps'] },
  { path: '/news', label: 'News', names: ['news'], badge: 'news' },
  { path: '/support', label: 'Support', names: ['support'], badge: 'support' },
  { path: '/settings', label: 'Settings', names: ['settings', 'sessions', 'whats-new'] },
  { path: '/admin', label: 'Admin', names: ['admin'], admin: true },
];

/** How often the badges ask again: news and support answers arrive while the page is open. */
const UNREAD_POLL_MS = 30_000;

/**
 * Unread news posts (news/list's `unreadCount`) and unread support answers (the threads'
 * `unreadCount`), asked at start, every 30 seconds, and when the page says something was read.
 */
export function useUnread(route: Route) {
  const [unread, setUnread] = useState({ news: 0, support: 0 });
  useEffect(() => {
    let live = true;
    const ask = () =>
      Promise.all([
        call<{ unreadCount: number }>('news/list', { limit: 1 }).then((r) => r.unreadCount, () => 0),
        call<{ threads: { unreadCount: number }[] }>('support/listThreads', { status: 'all', limit: 100 }).then((r) => r.threads.reduce((n, t) => n + t.unreadCount, 0), () => 0),
      ]).then(([news, support]) => live && setUnread({ news, support }));
    void ask();
    const timer = setInterval(ask, UNREAD_POLL_MS);
    addEventListener(UNREAD_CHANGED, ask);
    return () => ((live = false), clearInterval(timer), removeEventListener(UNREAD_CHANGED, ask));
  }, [route.name]);
  return unread;
}
/** Fired by a page that marked news or support messages read. */
export const UNREAD_CHANGED = 'parley:unread-changed';

/**
 * The top bar. On a phone (700 px and less) it is one row: the conversation list's button, the
 * name, and a Menu that holds the places and signing out, so the conversation keeps the screen.
 * The list's button counts the conversations offered to the user, which wait at the list's top.
 */
export function TopBar(props: { user: User; route: Route; offers: number; listOpen: boolean; onToggleList(): void; onSignOut(): void; onHelp(): void; visit: number }) {
  const { user, route } = props;
  const [menuOpen, setMenuOpen] = useState(false);
  const unread = useUnread(route);
  useEffect(() => setMenuOpen(false), [props.visit]);
  const total = unread.news + unread.support;
  return (
    <header class="topbar">
      <button type="button" class="list-toggle" aria-expanded={props.listOpen} aria-controls="conversations" onClick={props.onToggleList}>
        Conversations
        {props.offers > 0 && (
          <span class="badge" aria-label={`, ${props.offers} offered to you`}>
            {props.offers}
          </span>
        )}
      </button>
      <h1 class="brand">Parley</h1>
      <span class="who">{user.name || user.email}</span>
      <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="places" onClick={() => setMenuOpen(!menuOpen)}>
        Menu{total > 0 && <span class="badge" aria-label={`, ${total} unread`}>{total}</span>}
      </button>
      <div id="places" class={`places-panel${menuOpen ? ' open' : ''}`}>
        <nav class="places" aria-label="Places">
          {PLACES.filter((p) => !p.admin || user.isAdmin).map((p) => {
            const n = p.badge ? unread[p.badge] : 0;
            return (
              <a key={p.path} href={p.path} onClick={onLinkClick(p.path)} aria-current={p.names.includes(route.name) ? 'page' : undefined}>
                {p.label}
                {n > 0 && (
                  <span class="badge" aria-label={`, ${n} unread`}>
                    {n}
                  </span>
                )}
              </a>
            );
          })}
        </nav>
        <button type="button" class="help-button" aria-label="Keyboard shortcuts" onClick={props.onHelp}>
          ?
        </button>
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </div>
    </header>
  );
}
