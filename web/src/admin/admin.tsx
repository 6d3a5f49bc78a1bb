import './admin.css';
import { useEffect, useState } from 'preact/hooks';
import { call, type User } from '../shared/api';
import { AdminUsers } from './admin-users';
import { AdminBackups, AdminDoctor, AdminSettings } from './admin-server';
import { AdminMiniApps, AdminNews, AdminSupport } from './admin-service';
import { UsageReportView } from '../shared/usage-report';

/**
 * Administration (`admin/*` operations), for users with the admin flag (`parley user set
 * --admin`). The top bar shows the link to admins only; anyone else who opens /admin is told so,
 * and the server refuses their calls anyway (403).
 */
export function Admin() {
  const [me, setMe] = useState<User | null>();
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
      <AdminUsers me={me} />
      <section class="admin-section" aria-labelledby="admin-usage">
        <h3 id="admin-usage">Usage</h3>
        <p class="hint">
          Everyone's use of the models, as <code>parley usage</code> prints it (with <code>--csv</code> for a spreadsheet).
        </p>
        <UsageReportView operation="admin/getUsage" groupings={['user', 'model', 'key', 'day', 'kind']} id="admin-usage" />
      </section>
      <AdminSupport name={me.name} />
      <AdminNews />
      <AdminMiniApps />
      <AdminBackups />
      <AdminDoctor />
      <AdminSettings />
    </section>
  );
}
