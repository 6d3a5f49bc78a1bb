import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, call, CONVERSATIONS_CHANGED, SIGNED_OUT, type Conversation, type User } from './shared/api';
import { lazyView } from './shared/lazy';
import { navigate, useRoute, type Route } from './shared/router';
import { SignIn } from './auth/sign-in';
import { ConversationList } from './chat/conversation-list';
import { useShareOffers } from './chat/share-offers';
import { Chat } from './chat/chat';
import { Research } from './research/research';
import { Groups, Group, JoinGroup } from './groups/groups';
import { TopBar } from './shell/top-bar';
import { HelpDialog, useShortcuts } from './shell/shortcuts';
import { OfflineBanner, WhatsNewBanner } from './shell/status-banners';
import { takeReturn } from './oauth/return-after-sign-in';

// Pages most visits never open: chunks of their own (shared/lazy.tsx).
const Sessions = lazyView(() => import('./auth/sessions').then((m) => m.Sessions));
const Settings = lazyView(() => import('./settings/settings').then((m) => m.Settings));
const Admin = lazyView(() => import('./admin/admin').then((m) => m.Admin));
const FilesPage = lazyView(() => import('./files/files-page').then((m) => m.FilesPage));
const MemoriesPage = lazyView(() => import('./memories/memories-page').then((m) => m.MemoriesPage));
const AssistantsPage = lazyView(() => import('./assistants/assistants-page').then((m) => m.AssistantsPage));
const NewsPage = lazyView(() => import('./service/news-page').then((m) => m.NewsPage));
const SupportPage = lazyView(() => import('./service/support-page').then((m) => m.SupportPage));
const AppsPage = lazyView(() => import('./service/apps-page').then((m) => m.AppsPage));
const WhatsNewPage = lazyView(() => import('./service/whats-new-page').then((m) => m.WhatsNewPage));

/** The signed-in user, `null` when signed out, `undefined` while asking. */
function useSession() {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<{ user: User }>('auth/getSession')
      .then((s) => {
        // Signed in on the way from an MCP client's consent page: back to it.
        const back = takeReturn();
        if (back) location.replace(back);
        else setUser(s.user);
      })
      .catch((err) => {
        if (err instanceof ApiError && err.status === 401) setUser(null);
        // A fetch that failed outright (no answer at all): no network, or the server is down; the
        // browser cannot tell which (navigator.onLine is true behind a dead Wi-Fi).
        else if (err instanceof TypeError || !navigator.onLine) setError('You are offline, or Parley cannot be reached. Reload the page when the connection is back.');
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

/** The main area for the route; `visit` changes when the user goes somewhere, so a view starts afresh. */
function View({ route, visit, userId, isAdmin, onActivity }: { route: Route; visit: number; userId: string; isAdmin: boolean; onActivity(): void }) {
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
    case 'files':
      return <FilesPage key={visit} />;
    case 'memories':
      return <MemoriesPage key={visit} />;
    case 'assistants':
      return <AssistantsPage key={visit} isAdmin={isAdmin} />;
    case 'news':
      return <NewsPage key={visit} />;
    case 'support':
      return <SupportPage key={visit} id={route.id} />;
    case 'apps':
      return <AppsPage key={visit} />;
    case 'whats-new':
      return <WhatsNewPage key={visit} />;
    default:
      return <Chat key={visit} conversationId={route.name === 'conversation' ? route.id : undefined} userId={userId} onActivity={onActivity} />;
  }
}

function SignedIn({ user, onSignedOut }: { user: User; onSignedOut(): void }) {
  const { route, visit } = useRoute();
  const [conversations, setConversations] = useState<Conversation[]>([]);
  const [listOpen, setListOpen] = useState(false);
  const [help, setHelp] = useState(false);
  const shares = useShareOffers();
  const openHelp = useCallback(() => setHelp(true), []);
  useShortcuts(openHelp);
  const refresh = useCallback(() => {
    // A group's conversation lives on its group's page, not in the chat list.
    call<{ conversations: Conversation[] }>('chat/listConversations', { limit: 100, groups: false }).then((r) => setConversations(r.conversations), () => undefined);
  }, []);
  useEffect(() => {
    refresh();
    addEventListener(CONVERSATIONS_CHANGED, refresh);
    return () => removeEventListener(CONVERSATIONS_CHANGED, refresh);
  }, [refresh]);
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
      <TopBar user={user} route={route} visit={visit} offers={shares.offers.length} listOpen={listOpen} onToggleList={() => setListOpen(!listOpen)} onSignOut={signOut} onHelp={openHelp} />
      <nav id="conversations" class={`sidebar${listOpen ? ' open' : ''}`} aria-label="Conversations">
        <ConversationList
          conversations={conversations}
          userId={user.id}
          offers={shares.offers}
          onOffersAnswered={shares.refresh}
          current={current}
          onChanged={refresh}
          onDeleted={(id) => (id === current ? navigate('/') : undefined, refresh())}
        />
      </nav>
      <div class="banners">
        <OfflineBanner />
        <WhatsNewBanner />
      </div>
      <main class="main">
        <View route={route} visit={visit} userId={user.id} isAdmin={user.isAdmin === true} onActivity={refresh} />
      </main>
      <HelpDialog open={help} onClose={() => setHelp(false)} />
    </div>
  );
}
