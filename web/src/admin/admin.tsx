import './admin.css';
import { useEffect, useState } from 'preact/hooks';
import { call, type User } from '../shared/api';
import { AdminUsers } from './admin-users';
import { AdminBackups, AdminDoctor, AdminSettings } from './admin-server';
import { AdminMiniApps, AdminNews, AdminSupport } from './admin-service';
import { AdminTools } from './admin-tools';

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
      <AdminSupport name={me.name} />
      <AdminNews />
      <AdminMiniApps />
      <AdminTools />
      <AdminBackups />
      <AdminDoctor />
      <AdminSettings />
    </section>
  );
}
