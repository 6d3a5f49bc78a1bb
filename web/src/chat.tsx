import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, type Item } from './api';
import { renderMarkdown } from './markdown';
import { forgetPending, pendingResponse, resumeAnswer, sendMessage, type Answer } from './turn';
import { adoptAddress } from './router';

interface Props {
  conversationId: string | undefined;
  /** A message was sent or an answer ended: the list's order and titles change. */
  onActivity(): void;
}

/** One conversation: its messages, the answer being written, and the box to write in. */
export function Chat({ conversationId, onActivity }: Props) {
  const [items, setItems] = useState<Item[]>([]);
  const [loadError, setLoadError] = useState<string>();
  const [sent, setSent] = useState<string>();
  const [answer, setAnswer] = useState<Answer>();
  // One per view: leaving the view (a new visit, signing out) stops following its answer.
  const following = useRef(new AbortController());
  useEffect(() => () => following.current.abort(), []);
  // The conversation this view made by sending its first message: it is already on screen.
  const created = useRef<string | undefined>(undefined);
  const busy = answer !== undefined && (answer.state === 'waiting' || answer.state === 'streaming');
  // Keep the newest words in sight while they arrive, unless the reader scrolled up to read.
  const log = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useEffect(() => {
    if (pinned.current && log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [items, sent, answer]);

  const load = async (id: string) => {
    const r = await call<{ items: Item[] }>('chat/getConversation', { conversationId: id });
    setItems(r.items.filter((i) => i.role === 'user' || i.role === 'assistant'));
    return r.items;
  };

  useEffect(() => {
    if (!conversationId || conversationId === created.current) return;
    const signal = following.current.signal;
    load(conversationId)
      .then((loaded) => {
        const responseId = pendingResponse(conversationId);
        if (!responseId || signal.aborted) return;
        // The answer is stored as the conversation's last item once it ends: if it is there,
        // there is nothing to follow (the tab was away while it finished).
        if (loaded[loaded.length - 1]?.role !== 'user') return forgetPending(conversationId);
        return resumeAnswer(conversationId, responseId, { onAnswer: setAnswer }, signal).then(() => finish(conversationId));
      })
      .catch((err) => setLoadError(err instanceof ApiError && err.status < 500 ? 'This conversation does not exist, or you may not read it.' : 'The conversation could not be loaded.'));
  }, [conversationId]);

  const finish = async (id: string) => {
    if (following.current.signal.aborted) return;
    await load(id).catch(() => undefined);
    setSent(undefined);
    // The stored items now hold the answer, also a cut or stopped one: keep only its note.
    setAnswer((a) => (a && a.state !== 'done' ? { ...a, text: '' } : undefined));
    onActivity();
  };

  const send = async (message: string) => {
    setSent(message);
    setAnswer(undefined);
    let id = conversationId;
    await sendMessage(
      message,
      conversationId,
      {
        onConversation: (made) => {
          id = created.current = made;
          adoptAddress(`/c/${made}`);
          onActivity();
        },
        onAnswer: setAnswer,
      },
      following.current.signal,
    ).catch(() => setAnswer({ text: '', state: 'failed', error: 'The message could not be sent.' }));
    if (id) await finish(id);
  };

  const stop = () => answer?.responseId && call('chat/cancelResponse', { responseId: answer.responseId }).catch(() => undefined);

  if (loadError) return <p role="alert" class="page-message">{loadError}</p>;
  return (
    <div class="chat">
      <h2 class="visually-hidden">{conversationId ? 'Conversation' : 'New chat'}</h2>
      <div
        class="messages"
        role="log"
        aria-label="Messages"
        ref={log}
        onScroll={(e) => (pinned.current = e.currentTarget.scrollHeight - e.currentTarget.scrollTop - e.currentTarget.clientHeight < 40)}
      >
        <ol>
        {items.map((item) => (
          <Message key={item.id} role={item.role} text={item.content} />
        ))}
        {sent !== undefined && <Message role="user" text={sent} />}
        {answer && (answer.text || busy ? <Message role="assistant" text={answer.text} answer={answer} /> : <Ending answer={answer} />)}
        </ol>
      </div>
      {!conversationId && !items.length && sent === undefined && <p class="hint">Write a message to start a conversation.</p>}
      <Composer busy={busy} onSend={send} onStop={stop} />
    </div>
  );
}

/** How an answer that is now stored ended, when that was not a whole answer (stopped, failed). */
function Ending({ answer }: { answer: Answer }) {
  if (answer.state === 'done') return null;
  return (
    <li class="message note">
      {answer.state === 'stopped' ? <p class="hint">Stopped.</p> : <p role="alert" class="error">{answer.error}</p>}
    </li>
  );
}

function Message({ role, text, answer }: { role: Item['role']; text: string; answer?: Answer }) {
  return (
    <li class={`message ${role}`} aria-busy={answer && (answer.state === 'waiting' || answer.state === 'streaming') ? 'true' : undefined}>
      <h3 class="visually-hidden">{role === 'user' ? 'You' : 'Parley'}</h3>
      {role === 'assistant' ? <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} /> : <p class="plain">{text}</p>}
      {answer?.state === 'waiting' && <p class="hint">Thinking…</p>}
      {answer?.state === 'stopped' && <p class="hint">Stopped.</p>}
      {answer?.state === 'failed' && (
        <p role="alert" class="error">
          {answer.error}
        </p>
      )}
    </li>
  );
}

function Composer({ busy, onSend, onStop }: { busy: boolean; onSend(message: string): void; onStop(): void }) {
  const [text, setText] = useState('');
  const box = useRef<HTMLTextAreaElement>(null);
  useEffect(() => box.current?.focus(), []);
  const submit = (e?: Event) => {
    e?.preventDefault();
    const message = text.trim();
    if (!message || busy) return;
    setText('');
    onSend(message);
  };
  return (
    <form class="composer" onSubmit={submit}>
      <label for="message" class="visually-hidden">
        Message
      </label>
      <textarea
        id="message"
        ref={box}
        rows={3}
        value={text}
        placeholder="Message Parley (Enter sends, Shift+Enter adds a line)"
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
        }}
      />
      {busy ? (
        <button type="button" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" disabled={!text.trim()}>
          Send
        </button>
      )}
    </form>
  );
}
