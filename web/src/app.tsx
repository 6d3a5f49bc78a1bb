import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, call, SIGNED_OUT, type Conversation, type User } from './shared/api';
import { SignIn } from './auth/sign-in';
import { ConversationList } from './chat/conversation-list';
import { Chat } from './chat/chat';
import { Sessions } from './auth/sessions';
import { Research } from './research/research';
import { Groups, Group, JoinGroup } from './groups/groups';
import { Settings } from './settings/settings';
import { Admin } from './admin/admin';
import { navigate, onLinkClick, useRoute, type Route } from './shared/router';

/** The signed-in user, `null` when signed out, `undefined` while asking. */
function useSession() {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<{ user: User }>('auth/getSession')
      .then((s) => setUser(s.user))
      .catch((err) => {
        if (err instanceof ApiError && err.status === 401) setUser(null);
        else setError('Parley could not be reached. Reload the page to try again.');
      });
    const signedOut = () => setUser(null);
    addEventListener(SIGNED_OUT, signedOut);
    return () => removeEventListener(SIGNED_OUT, signedOut);
  }, []);
  return { user, setUser, error };
}

export function App() {
  const { user, setUser, error } = useSession();
  if (error) return <p role="alert" class="page-message">{error}</p>;
  if (user === undefined) return <p class="page-message">Loading…</p>;
  if (user === null) return <SignIn />;
  return <SignedIn user={user} onSignedOut={() => setUser(null)} />;
}

/** The top bar's places: the view names each one covers (for `aria-current`). */
const PLACES: { path: string; label: string; names: Route['name'][]; admin?: boolean }[] = [
  { path: '/', label: 'Chat', names: ['new', 'conversation'] },
  { path: '/research', label: 'Research', names: ['research'] },
  { path: '/groups', label: 'Groups', names: ['groups', 'group', 'join'] },
  { path: '/settings', label: 'Settings', names: ['settings', 'sessions'] },
  { path: '/admin', label: 'Admin', names: ['admin'], admin: true },
];

/** The main area for the route; `visit` changes when the user goes somewhere, so a view starts afresh. */
function View({ route, visit, onActivity }: { route: Route; visit: number; onActivity(): void }) {
  switch (route.name) {
    case 'sessions':
      return <Sessions />;
    case 'research':
      return <Research key={visit} id={route.id} onActivity={onActivity} />;
    case 'groups':
      return <Groups key={visit} />;
    case 'group':
      return <Group key={visit} id={route.id} />;
    case 'join':
      return <JoinGroup key={visit} token={route.token} />;
    case 'settings':
      return <Settings key={visit} />;
    case 'admin':
      return <Admin key={visit} />;
    default:
      return <Chat key={visit} conversationId={route.name === 'conversation' ? route.id : undefined} onActivity={onActivity} />;
  }
}

function SignedIn({ user, onSignedOut }: { user: User; onSignedOut(): void }) {
  const { route, visit } = useRoute();
  const [conversations, setConversations] = useState<Conversation[]>([]);
  const [listOpen, setListOpen] = useState(false);
  const refresh = useCallback(() => {
    // A group's conversation lives on its group's page, not in the chat list.
    call<{ conversations: Conversation[] }>('chat/listConversations', { limit: 100, groups: false }).then((r) => setConversations(r.conversations), () => undefined);
  }, []);
  useEffect(refresh, [refresh]);
  // On a phone the list is a panel over the chat: choosing a conversation closes it.
  useEffect(() => setListOpen(false), [visit]);

  const signOut = async () => {
    await call('auth/signOut').catch(() => undefined);
    history.replaceState(null, '', '/');
    onSignedOut();
  };
  // The conversation on screen (a chat or a research run), marked in the list.
  const current = route.name === 'conversation' || route.name === 'research' ? route.id : undefined;

  return (
    <div class="layout">
      <header class="topbar">
        <button type="button" class="list-toggle" aria-expanded={listOpen} aria-controls="conversations" onClick={() => setListOpen(!listOpen)}>
          Conversations
        </button>
        <h1 class="brand">Parley</h1>
        <span class="who">{user.name || user.email}</span>
        <nav class="places" aria-label="Places">
          {PLACES.filter((p) => !p.admin || user.isAdmin).map((p) => (
            <a key={p.path} href={p.path} onClick={onLinkClick(p.path)} aria-current={p.names.includes(route.name) ? 'page' : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav id="conversations" class={`sidebar${listOpen ? ' open' : ''}`} aria-label="Conversations">
        <ConversationList conversations={conversations} current={current} onChanged={refresh} onDeleted={(id) => (id === current ? navigate('/') : undefined, refresh())} />
      </nav>
      <main class="main">
        <View route={route} visit={visit} onActivity={refresh} />
      </main>
    </div>
  );
}
