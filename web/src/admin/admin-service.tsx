import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import { SupportMessages, type SupportMessage } from '../service/support-messages';
import type { MiniApp } from '../service/apps-page';

interface Post {
  id: string;
  title: string;
  body: string;
  createdAt: string;
  readCount: number;
}
type Outcome = { error?: string; done?: string };
const when = (iso: string) => new Date(iso).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });

/** News for every user: post one, see how many read each, delete one (admin/listNews, postNews, deleteNews). */
export function AdminNews() {
  const [posts, setPosts] = useState<Post[]>();
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const [note, setNote] = useState<Outcome>({});
  const load = () => call<{ posts: Post[] }>('admin/listNews').then((r) => setPosts(r.posts), (err) => setNote({ error: messageOf(err) }));
  useEffect(() => void load(), []);
  const post = async (e: Event) => {
    e.preventDefault();
    try {
      const p = await call<Post>('admin/postNews', { title, body });
      setTitle('');
      setBody('');
      setNote({ done: `Posted "${p.title}".` });
      await load();
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  const remove = async (p: Post) => {
    if (!confirm(`Delete the news "${p.title}"?`)) return;
    await call('admin/deleteNews', { id: p.id }).then(() => (setNote({ done: `Deleted "${p.title}".` }), load()), (err) => setNote({ error: messageOf(err) }));
  };
  return (
    <section class="admin-section" aria-labelledby="admin-news">
      <h3 id="admin-news">News</h3>
      <form class="admin-form" onSubmit={post} aria-label="Post news">
        <div class="admin-fields admin-fields-wide">
          <label>
            Title
            <input required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
          </label>
          <label>
            Text (Markdown)
            <textarea required rows={4} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
          </label>
        </div>
        <button type="submit">Post to every user</button>
      </form>
      <Note {...note} />
      {posts?.length === 0 && <p class="hint">No news posted.</p>}
      {posts && posts.length > 0 && (
        <ul class="admin-list" aria-label="Posted news">
          {posts.map((p) => (
            <li key={p.id}>
              <span>
                <strong>{p.title}</strong> <span class="hint">{when(p.createdAt)} · read by {p.readCount}</span>
              </span>
              <button type="button" aria-label={`Delete the news "${p.title}"`} onClick={() => remove(p)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

interface AdminThread {
  id: string;
  subject: string;
  status: 'open' | 'closed';
  lastMessageAt: string;
  unreadCount: number;
  userEmail: string;
}

/** Users' support conversations: read one and answer it (admin/listSupportThreads, getSupportThread, replySupport). */
export function AdminSupport({ name }: { name: string }) {
  const [status, setStatus] = useState<'open' | 'closed' | 'all'>('open');
  const [threads, setThreads] = useState<AdminThread[]>();
  const [open, setOpen] = useState<{ thread: AdminThread; messages: SupportMessage[] }>();
  const [reply, setReply] = useState('');
  const [close, setClose] = useState(false);
  const [note, setNote] = useState<Outcome>({});
  const load = () => call<{ threads: AdminThread[] }>('admin/listSupportThreads', { status }).then((r) => setThreads(r.threads), (err) => setNote({ error: messageOf(err) }));
  useEffect(() => void load(), [status]);
  const show = (id: string) =>
    call<{ thread: AdminThread; messages: SupportMessage[] }>('admin/getSupportThread', { threadId: id }).then(
      (r) => (setOpen(r), setNote({}), load()),
      (err) => setNote({ error: messageOf(err) }),
    );
  const send = async (e: Event) => {
    e.preventDefault();
    if (!open) return;
    try {
      const r = await call<{ push: { status: string } }>('admin/replySupport', { threadId: open.thread.id, message: reply, close, name });
      setReply('');
      setClose(false);
      await show(open.thread.id);
      setNote({ done: `Answered${r.push.status === 'sent' ? '; the user was notified on their devices' : ''}.` });
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  return (
    <section class="admin-section" aria-labelledby="admin-support">
      <h3 id="admin-support">Support</h3>
      <label>
        Show{' '}
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as typeof status)}>
          <option value="open">Open conversations</option>
          <option value="closed">Closed conversations</option>
          <option value="all">All conversations</option>
        </select>
      </label>
      {threads?.length === 0 && <p class="hint">No conversations.</p>}
      {threads && threads.length > 0 && (
        <ul class="admin-list" aria-label="Support conversations">
          {threads.map((t) => (
            <li key={t.id}>
              <span>
                <strong>{t.subject}</strong>{' '}
                <span class="hint">
                  {t.userEmail} · {t.status} · {when(t.lastMessageAt)}
                </span>
                {t.unreadCount > 0 && <span class="badge">{t.unreadCount}</span>}
              </span>
              <button type="button" aria-label={`Open "${t.subject}" from ${t.userEmail}`} onClick={() => show(t.id)}>
                Open
              </button>
            </li>
          ))}
        </ul>
      )}
      <Note {...note} />
      {open && (
        <div class="admin-manage" role="group" aria-labelledby="support-open-title">
          <h4 id="support-open-title">
            {open.thread.subject} <span class="hint">from {open.thread.userEmail}</span>
          </h4>
          <SupportMessages messages={open.messages} side="admin" userName={open.thread.userEmail} />
          <form class="admin-form" onSubmit={send} aria-label="Answer">
            <div class="admin-fields admin-fields-wide">
              <label>
                Your answer
                <textarea required rows={3} value={reply} onInput={(e) => setReply(e.currentTarget.value)} />
              </label>
              <label class="check">
                <input type="checkbox" checked={close} onChange={(e) => setClose(e.currentTarget.checked)} /> Close the conversation with this answer
              </label>
            </div>
            <button type="submit">Send answer</button>
          </form>
        </div>
      )}
    </section>
  );
}

/** The mini apps offered to every user: add, reorder, remove (admin/listMiniApps, addMiniApp, updateMiniApp, removeMiniApp). */
export function AdminMiniApps() {
  const [apps, setApps] = useState<(MiniApp & { position: number })[]>();
  const [form, setForm] = useState({ name: '', url: '', description: '' });
  const [note, setNote] = useState<Outcome>({});
  const load = () => call<{ apps: (MiniApp & { position: number })[] }>('admin/listMiniApps').then((r) => setApps(r.apps), (err) => setNote({ error: messageOf(err) }));
  useEffect(() => void load(), []);
  const act = async (fn: () => Promise<unknown>, done: string) => {
    try {
      await fn();
      setNote({ done });
      await load();
      return true;
    } catch (err) {
      setNote({ error: messageOf(err) });
      return false;
    }
  };
  const add = async (e: Event) => {
    e.preventDefault();
    const ok = await act(() => call('admin/addMiniApp', { name: form.name, url: form.url, ...(form.description.trim() ? { description: form.description } : {}) }), `Added ${form.name}.`);
    if (ok) setForm({ name: '', url: '', description: '' });
  };
  const swap = (i: number, j: number) => {
    const a = apps![i]!;
    const b = apps![j]!;
    // Distinct positions, so the order holds whatever their names.
    const [pa, pb] = a.position === b.position ? [b.position + 1, a.position] : [b.position, a.position];
    void act(() => Promise.all([call('admin/updateMiniApp', { id: a.id, position: pa }), call('admin/updateMiniApp', { id: b.id, position: pb })]), `Moved ${a.name}.`);
  };
  const field = (key: keyof typeof form) => (e: Event) => setForm({ ...form, [key]: (e.currentTarget as HTMLInputElement).value });
  return (
    <section class="admin-section" aria-labelledby="admin-apps">
      <h3 id="admin-apps">Mini apps</h3>
      <form class="admin-form" onSubmit={add} aria-label="Add a mini app">
        <div class="admin-fields">
          <label>
            Name
            <input required maxLength={100} value={form.name} onInput={field('name')} />
          </label>
          <label>
            Address (https)
            <input required type="url" value={form.url} onInput={field('url')} placeholder="https://" />
          </label>
          <label>
            Description (optional)
            <input maxLength={500} value={form.description} onInput={field('description')} />
          </label>
        </div>
        <button type="submit">Add app</button>
      </form>
      <Note {...note} />
      {apps?.length === 0 && <p class="hint">No mini apps.</p>}
      {apps && apps.length > 0 && (
        <ul class="admin-list" aria-label="Mini apps">
          {apps.map((a, i) => (
            <li key={a.id}>
              <span>
                <strong>{a.name}</strong> <span class="hint">{a.url}</span>
              </span>
              <span class="admin-row-buttons">
                <button type="button" aria-label={`Move ${a.name} up`} disabled={i === 0} onClick={() => swap(i, i - 1)}>
                  Up
                </button>
                <button type="button" aria-label={`Move ${a.name} down`} disabled={i === apps.length - 1} onClick={() => swap(i, i + 1)}>
                  Down
                </button>
                <button type="button" aria-label={`Remove ${a.name}`} onClick={() => confirm(`Remove ${a.name}?`) && act(() => call('admin/removeMiniApp', { id: a.id }), `Removed ${a.name}.`)}>
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
