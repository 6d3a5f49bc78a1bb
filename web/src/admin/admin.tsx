import './admin.css';
import { useEffect, useState } from 'preact/hooks';
import { call, type User } from '../shared/api';
import { AdminUsers } from './admin-users';
import { AdminBackups, AdminDoctor, AdminSettings } from './admin-server';
import { AdminMiniApps, AdminNews, AdminSupport } from './admin-service';
import { AdminTools } from './admin-tools';
import { UsageReportView } from '../shared/usage-report';
import { AdminMcp } from './admin-mcp';
import { AdminConnections } from './admin-connections';
import { AdminModels } from './admin-models';
import { AdminQuotas } from './admin-quotas';

/** The page's sections, for the list of links atop it (a long page on a phone). */
const SECTIONS: [string, string][] = [
  ['admin-users', 'Users'],
  ['admin-connections', 'Connections'],
  ['admin-models', 'Models'],
  ['admin-usage', 'Usage'],
  ['admin-quotas', 'Quotas and prices'],
  ['admin-support', 'Support'],
  ['admin-news', 'News'],
  ['admin-apps', 'Mini apps'],
  ['admin-tools', 'Tools'],
  ['admin-mcp', 'MCP servers'],
  ['admin-backups', 'Backups'],
  ['admin-doctor', 'Health checks'],
  ['admin-settings', 'Server settings'],
];

/**
 * A link to a section's heading that scrolls there without changing the address: a `#fragment`
 * would count as a new visit (the router listens to popstate) and load the page afresh.
 */
function jump(e: MouseEvent, id: string) {
  const heading = document.getElementById(id);
  if (!heading) return;
  e.preventDefault();
  heading.scrollIntoView({ block: 'start' });
  heading.setAttribute('tabindex', '-1');
  heading.focus({ preventScroll: true });
}

/**
 * Administration (`admin/*` operations), for users with the admin flag (`parley user set
 * --admin`). The top bar shows the link to admins only; anyone else who opens /admin is told so,
 * and the server refuses their calls anyway (403).
 */
export function Admin() {
  const [me, setMe] = useState<User | null>();
  const [catalogue, setCatalogue] = useState(0);
  useEffect(() => {
    call<{ user: User }>('auth/getSession').then(
      (s) => setMe(s.user),
      () => setMe(null),
    );
  }, []);
  if (me === undefined) return <p class="page-message">Loading…</p>;
  if (!me?.isAdmin)
    return (
      <section class="page" aria-labelledby="admin-title">
        <h2 id="admin-title">Admin</h2>
        <p role="alert">Only admins can see this page.</p>
      </section>
    );
  return (
    <section class="page admin" aria-labelledby="admin-title">
      <h2 id="admin-title">Admin</h2>
      <nav aria-label="Sections of the admin page" class="admin-toc">
        {SECTIONS.map(([id, label]) => (
          <a key={id} href={`#${id}`} onClick={(e) => jump(e, id)}>
            {label}
          </a>
        ))}
      </nav>
      <AdminUsers me={me} />
      <AdminConnections onChanged={() => setCatalogue((n) => n + 1)} />
      <AdminModels version={catalogue} />
      <section class="admin-section" aria-labelledby="admin-usage">
        <h3 id="admin-usage">Usage</h3>
        <p class="hint">
          Everyone's use of the models, as <code>parley usage</code> prints it (with <code>--csv</code> for a spreadsheet).
        </p>
        <UsageReportView operation="admin/getUsage" groupings={['user', 'model', 'key', 'day', 'kind']} id="admin-usage" />
      </section>
      <AdminQuotas version={catalogue} />
      <AdminSupport name={me.name} />
      <AdminNews />
      <AdminMiniApps />
      <AdminTools />
      <AdminMcp />
      <AdminBackups />
      <AdminDoctor />
      <AdminSettings />
    </section>
  );
}
