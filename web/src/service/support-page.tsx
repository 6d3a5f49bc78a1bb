import './service.css';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { navigate, onLinkClick } from '../shared/router';
import { UNREAD_CHANGED } from '../shell/top-bar';
import { SupportMessages, type SupportMessage, type SupportThread } from './support-messages';

const said = (err: unknown, fallback: string) => (err instanceof ApiError ? err.message : fallback);
/**
 * Support has no stream (docs/support.md): an open conversation asks again every few seconds,
 * so an admin's answer appears while the user waits on the page.
 */
const POLL_MS = 4000;

/** Conversations with the server's admins: the list and a new one, or one conversation (`/support/<id>`). */
export function SupportPage({ id }: { id?: string }) {
  return id ? <SupportThreadView id={id} /> : <SupportList />;
}

function SupportList() {
  const [threads, setThreads] = useState<SupportThread[]>();
  const [subject, setSubject] = useState('');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<string>();
  useEffect(() => {
    call<{ threads: SupportThread[] }>('support/listThreads', { status: 'all', limit: 100 }).then(
      (r) => setThreads(r.threads),
      (err) => setError(said(err, 'Your conversations could not be listed.')),
    );
  }, []);
  const open = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await call<{ thread: SupportThread }>('support/createThread', { subject: subject.trim(), message: message.trim() });
      navigate(`/support/${r.thread.id}`);
    } catch (err) {
      setError(said(err, 'The conversation could not be opened.'));
    }
  };
  return (
    <section class="page support" aria-labelledby="support-title">
      <h2 id="support-title">Support</h2>
      <p class="hint">Write to the people who run this server: a question, a problem, an idea. They answer here.</p>
      <form class="support-new" onSubmit={open}>
        <h3>New conversation</h3>
        <label for="support-subject">Subject</label>
        <input id="support-subject" maxLength={200} value={subject} onInput={(e) => setSubject(e.currentTarget.value)} />
        <label for="support-message">Message</label>
        <textarea id="support-message" rows={4} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        <button type="submit" disabled={!subject.trim() || !message.trim()}>
          Send to support
        </button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <h3>Your conversations</h3>
      {threads?.length === 0 && <p class="hint">None yet.</p>}
      {threads && threads.length > 0 && (
        <ul class="support-threads">
          {threads.map((t) => (
            <li key={t.id}>
              <a href={`/support/${t.id}`} onClick={onLinkClick(`/support/${t.id}`)}>
                {t.subject}
              </a>
              {t.unreadCount > 0 && (
                <span class="badge" aria-label={`${t.unreadCount} unread`}>
                  {t.unreadCount}
                </span>
              )}
              <span class="hint">
                {t.status === 'closed' ? 'Closed' : 'Open'} · {new Date(t.lastMessageAt).toLocaleString()}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function SupportThreadView({ id }: { id: string }) {
  const [thread, setThread] = useState<SupportThread>();
  const [messages, setMessages] = useState<SupportMessage[]>([]);
  const [reply, setReply] = useState('');
  const [error, setError] = useState<string>();
  const load = () =>
    call<{ thread: SupportThread; messages: SupportMessage[] }>('support/getThread', { threadId: id }).then((r) => {
      setThread(r.thread);
      setMessages((shown) => (shown.length === r.messages.length && shown.at(-1)?.id === r.messages.at(-1)?.id ? shown : r.messages));
      dispatchEvent(new Event(UNREAD_CHANGED));
    });
  useEffect(() => {
    load().catch((err) => setError(err instanceof ApiError && err.status < 500 ? 'This conversation does not exist, or it is not yours.' : said(err, 'The conversation could not be loaded.')));
    const timer = setInterval(() => load().catch(() => undefined), POLL_MS);
    return () => clearInterval(timer);
  }, [id]);
  const send = async (e: Event) => {
    e.preventDefault();
    try {
      await call('support/sendMessage', { threadId: id, message: reply.trim() });
      setReply('');
      setError(undefined);
      await load();
    } catch (err) {
      setError(said(err, 'The message could not be sent.'));
    }
  };
  const close = () => call('support/closeThread', { threadId: id }).then(load, (err) => setError(said(err, 'The conversation could not be closed.')));
  return (
    <section class="page support" aria-labelledby="thread-title">
      <p>
        <a href="/support" onClick={onLinkClick('/support')}>
          All support conversations
        </a>
      </p>
      <h2 id="thread-title">{thread?.subject ?? 'Support'}</h2>
      {thread && <p class="hint">{thread.status === 'closed' ? 'Closed. Writing again opens it.' : 'Open: support answers here.'}</p>}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <SupportMessages messages={messages} side="user" />
      {thread && (
        <form class="support-reply" onSubmit={send}>
          <label for="support-reply">Your reply</label>
          <textarea id="support-reply" rows={3} value={reply} onInput={(e) => setReply(e.currentTarget.value)} />
          <div class="edit-buttons">
            <button type="submit" disabled={!reply.trim()}>
              Send
            </button>
            {thread.status === 'open' && (
              <button type="button" onClick={close}>
                Close conversation
              </button>
            )}
          </div>
        </form>
      )}
    </section>
  );
}
