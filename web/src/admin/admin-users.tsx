import { useEffect, useState } from 'preact/hooks';
import { call, type User } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import { AdminKeys } from './admin-keys';
import { TIERS } from './connections-api';
import { AdminTable } from './admin-table';

export interface AdminUser {
  id: string;
  email: string;
  name: string;
  accountType: string;
  isLocked: boolean;
  isAdmin: boolean;
  bonusBalance: number;
  subscription: { tier: string; isActive: boolean; expiresAt: string | null };
}

const ACCOUNT_TYPES = ['GENERAL', 'STUDENT', 'PROFESSIONAL', 'DEVELOPER'];

/** Every user, a form to add one, and the chosen user's settings, credits and API keys. */
export function AdminUsers({ me }: { me: User }) {
  const [users, setUsers] = useState<AdminUser[]>();
  const [chosen, setChosen] = useState<string>();
  const [error, setError] = useState<string>();
  const load = () =>
    call<{ users: AdminUser[] }>('admin/listUsers').then(
      (r) => (setUsers(r.users), setError(undefined)),
      (err) => setError(messageOf(err)),
    );
  useEffect(() => void load(), []);
  const current = users?.find((u) => u.id === chosen);

  return (
    <section class="admin-section" aria-labelledby="admin-users">
      <h3 id="admin-users">Users</h3>
      <CreateUser onCreated={(u) => (load(), setChosen(u.id))} />
      <Note error={error} />
      {users && (
        <AdminTable caption="Users" columns={['E-mail', 'Name', 'Tier', 'Credits', 'Role']} actions>
          {users.map((u) => (
            <tr key={u.id} class={u.id === chosen ? 'chosen' : undefined}>
              <td>{u.email}</td>
              <td>{u.name || '—'}</td>
              <td>
                {u.subscription.tier}
                {u.subscription.isActive ? '' : ' (inactive)'}
              </td>
              <td>{u.bonusBalance}</td>
              <td>{u.isAdmin ? 'Admin' : 'User'}</td>
              <td>
                <button type="button" aria-label={`Manage ${u.email}`} aria-pressed={u.id === chosen} onClick={() => setChosen(u.id === chosen ? undefined : u.id)}>
                  Manage
                </button>
              </td>
            </tr>
          ))}
        </AdminTable>
      )}
      {current && <ManageUser key={current.id} user={current} isMe={current.id === me.id} onChanged={load} />}
    </section>
  );
}

function CreateUser({ onCreated }: { onCreated(u: AdminUser): void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [admin, setAdmin] = useState(false);
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await call<{ user: AdminUser }>('admin/createUser', { email, name, isAdmin: admin });
      setNote({ done: `Created ${r.user.email}. They sign in with a login link (parley login-link) or a sign-in provider.` });
      setEmail(''), setName(''), setAdmin(false);
      onCreated(r.user);
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  return (
    <form class="admin-form" onSubmit={submit} aria-label="Add a user">
      <h4>Add a user</h4>
      <div class="admin-fields">
        <label>
          E-mail
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} autocomplete="off" />
        </label>
        <label>
          Name
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} autocomplete="off" />
        </label>
        <label class="check">
          <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.currentTarget.checked)} /> Admin
        </label>
      </div>
      <button type="submit">Add user</button>
      <Note {...note} />
    </form>
  );
}

/** One user's subscription, account type, admin flag, credits and keys. */
function ManageUser({ user, isMe, onChanged }: { user: AdminUser; isMe: boolean; onChanged(): void }) {
  return (
    <section class="admin-manage" aria-labelledby="manage-title">
      <h4 id="manage-title">Managing {user.email}</h4>
      <UserSettings user={user} isMe={isMe} onChanged={onChanged} />
      <GrantCredits user={user} onChanged={onChanged} />
      <AdminKeys userId={user.id} email={user.email} />
    </section>
  );
}

function UserSettings({ user, isMe, onChanged }: { user: AdminUser; isMe: boolean; onChanged(): void }) {
  const [tier, setTier] = useState(user.subscription.tier);
  const [active, setActive] = useState(user.subscription.isActive);
  const [accountType, setAccountType] = useState(user.accountType);
  const [locked, setLocked] = useState(user.isLocked);
  const [admin, setAdmin] = useState(user.isAdmin);
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await call('admin/updateUser', { userId: user.id, tier, active, accountType, locked, ...(admin !== user.isAdmin ? { admin } : {}) });
      setNote({ done: `Saved the changes to ${user.email}.` });
      onChanged();
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  return (
    <form class="admin-form" onSubmit={submit} aria-label={`Account of ${user.email}`}>
      <h5>Account</h5>
      <div class="admin-fields">
        <label>
          Subscription tier
          <select value={tier} onChange={(e) => setTier(e.currentTarget.value)}>
            {TIERS.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} /> Subscription active
        </label>
        <label>
          Account type
          <select value={accountType} onChange={(e) => setAccountType(e.currentTarget.value)}>
            {ACCOUNT_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={locked} onChange={(e) => setLocked(e.currentTarget.checked)} /> Account type locked
        </label>
        <label class="check">
          {/* The server refuses removing one's own flag too; disabled here so nobody tries. */}
          <input type="checkbox" checked={admin} disabled={isMe} aria-describedby={isMe ? 'own-admin-hint' : undefined} onChange={(e) => setAdmin(e.currentTarget.checked)} /> Admin
        </label>
        {isMe && (
          <p id="own-admin-hint" class="hint">
            You cannot remove your own admin flag: another admin can.
          </p>
        )}
      </div>
      <button type="submit">Save</button>
      <Note {...note} />
    </form>
  );
}

function GrantCredits({ user, onChanged }: { user: AdminUser; onChanged(): void }) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await call<{ bonusBalance: number }>('admin/grantCredits', { userId: user.id, amount: Number(amount), ...(reason ? { reason } : {}) });
      setNote({ done: `Granted ${amount} credits. Bonus balance: ${r.bonusBalance}.` });
      setAmount('');
      onChanged();
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  return (
    <form class="admin-form" onSubmit={submit} aria-label={`Grant credits to ${user.email}`}>
      <h5>Credits</h5>
      <p class="hint">Bonus balance: {user.bonusBalance}</p>
      <div class="admin-fields">
        <label>
          Credits to grant
          <input type="number" min="1" step="1" required value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
        </label>
        <label>
          Reason (optional)
          <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} placeholder="admin_grant" />
        </label>
      </div>
      <button type="submit">Grant credits</button>
      <Note {...note} />
    </form>
  );
}
