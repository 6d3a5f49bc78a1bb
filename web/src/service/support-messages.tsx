import { useEffect, useRef } from 'preact/hooks';

export interface SupportThread {
  id: string;
  subject: string;
  status: 'open' | 'closed';
  lastMessageAt: string;
  unreadCount: number;
}
export interface SupportMessage {
  id: string;
  author: 'user' | 'admin';
  adminName: string | null;
  body: string;
  createdAt: string;
}

/** A support conversation's messages as a `log`, oldest first; `side` is the reader's ("You" on theirs). */
export function SupportMessages({ messages, side, userName }: { messages: SupportMessage[]; side: 'user' | 'admin'; userName?: string }) {
  const log = useRef<HTMLDivElement>(null);
  useEffect(() => log.current?.querySelector('li:last-child')?.scrollIntoView({ block: 'nearest' }), [messages.length]);
  const who = (m: SupportMessage) =>
    m.author === side ? 'You' : m.author === 'admin' ? (m.adminName ? `${m.adminName} (support)` : 'Support') : (userName ?? 'The user');
  return (
    <div role="log" aria-label="Messages" ref={log}>
    <ol class="support-messages">
      {messages.map((m) => (
        <li key={m.id} class={`support-message ${m.author}${m.author === side ? ' mine' : ''}`}>
          <p class="author">
            <strong>{who(m)}</strong> <span class="hint">· {new Date(m.createdAt).toLocaleString()}</span>
          </p>
          <p class="plain">{m.body}</p>
        </li>
      ))}
    </ol>
    </div>
  );
}
