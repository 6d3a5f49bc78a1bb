import './settings.css';
import { onLinkClick } from '../shared/router';
import { PreferencesSection } from './settings-preferences';
import { AccountSection } from './settings-account';
import { ApiKeysSection } from './settings-keys';
import { OtherAppsSection } from './settings-other-apps';
import { BookmarksSection } from './settings-bookmarks';
import { ConversationsSection } from './settings-conversations';
import { UsageReportView } from '../shared/usage-report';
import { UsageCalls } from './usage-calls';
import { McpSection } from './settings-mcp';

/** The user's settings: preferences, account, API keys, MCP servers, other apps over MCP, bookmarks, and the way to the sessions page. */
export function Settings() {
  return (
    <section class="page settings" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <p>
        Where you are signed in: <a href="/sessions" onClick={onLinkClick('/sessions')}>Sessions</a> · What the assistant remembers:{' '}
        <a href="/memories" onClick={onLinkClick('/memories')}>
          Memories
        </a>{' '}
        · <a href="/whats-new" onClick={onLinkClick('/whats-new')}>What's new</a>
      </p>
      <PreferencesSection />
      <AccountSection />
      <ApiKeysSection />
      <section class="settings-section" aria-labelledby="usage-title">
        <h3 id="usage-title">Usage</h3>
        <p class="hint">What your requests used of the models: tokens as the provider reported them (or counted by Parley when it reported none), and the bonus credits spent.</p>
        <UsageReportView operation="usage/getUsage" groupings={['day', 'model', 'key', 'kind']} id="usage-title" />
        <UsageCalls />
      </section>
      <McpSection />
      <OtherAppsSection />
      <BookmarksSection />
      <ConversationsSection />
    </section>
  );
}
