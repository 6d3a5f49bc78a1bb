import './chat.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, type Item } from '../shared/api';
import { forgetPending, pendingResponse, resumeAnswer, sendMessage, type Answer } from './turn';
import { adoptAddress, navigate, onLinkClick } from '../shared/router';
import { Message } from './chat-message';
import { Composer } from './chat-composer';
import { useModels } from './chat-models';
import { imagesOf } from './chat-images';

interface Props {
  conversationId: string | undefined;
  /** A message was sent or an answer ended: the list's order and titles change. */
  onActivity(): void;
}

/** An item as chat/getConversation gives it: a user message's images are in its `parts`. */
type StoredItem = Item & { parts?: unknown[] };
interface ConversationView {
  id: string;
  title: string;
  branchOf: { conversationId: string; itemId: string } | null;
}

/** Why chat/truncateConversationFromItem changed nothing, in words. */
const TRUNCATE_REFUSED: Record<string, string> = {
  GROUP_CONVERSATION: 'The messages of a group chat cannot be edited.',
  CONVERSATION_NOT_WRITABLE: 'You may not change this conversation.',
  ITEM_NOT_FOUND: 'This message is no longer in the conversation. Reload the page to see it as it is now.',
};

/** One conversation: its messages, the answer being written, and the box to write in. */
export function Chat({ conversationId, onActivity }: Props) {
  const [items, setItems] = useState<StoredItem[]>([]);
  const [conversation, setConversation] = useState<ConversationView>();
  const [loadError, setLoadError] = useState<string>();
  const [actionError, setActionError] = useState<string>();
  const [sent, setSent] = useState<{ text: string; images: string[] }>();
  const [answer, setAnswer] = useState<Answer>();
  const [editing, setEditing] = useState<string>();
  const models = useModels();
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
    const r = await call<{ conversation: ConversationView; items: StoredItem[] }>('chat/getConversation', { conversationId: id });
    setConversation(r.conversation);
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

  const send = async (message: string, images: string[]) => {
    setSent({ text: message, images });
    setAnswer(undefined);
    setActionError(undefined);
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
      { model: models.model, images },
    ).catch(() => setAnswer({ text: '', state: 'failed', error: 'The message could not be sent.' }));
    if (id) await finish(id);
  };

  const stop = () => answer?.responseId && call('chat/cancelResponse', { responseId: answer.responseId }).catch(() => undefined);

  /** Edit and continue: the message and everything after it go, and the edited text is sent as a new turn. */
  const saveEdit = async (item: StoredItem, text: string) => {
    if (!conversationId) return;
    setActionError(undefined);
    const r = await call<{ success: boolean; reason?: string }>('chat/truncateConversationFromItem', { conversationId, fromItemId: item.id }).catch(() => undefined);
    if (!r?.success) return setActionError(TRUNCATE_REFUSED[r?.reason ?? ''] ?? 'The message could not be edited. Try again.');
    setEditing(undefined);
    setItems((list) => list.filter((_, i) => i < list.findIndex((x) => x.id === item.id)));
    // The images of the message stay with it.
    await send(text, imagesOf(item.parts));
  };

  const branch = async (item: StoredItem) => {
    if (!conversationId) return;
    setActionError(undefined);
    try {
      const r = await call<{ conversation: { id: string } }>('chat/branchConversation', { conversationId, fromItemId: item.id });
      onActivity();
      navigate(`/c/${r.conversation.id}`);
    } catch (err) {
      setActionError(err instanceof ApiError && err.status < 500 ? err.message : 'The conversation could not be branched. Try again.');
    }
  };

  if (loadError) return <p role="alert" class="page-message">{loadError}</p>;
  // A message's actions wait while an answer is being written: the history is still growing.
  const idle = !busy && sent === undefined && !!conversationId;
  return (
    <div class="chat">
      <h2 class="visually-hidden">{conversationId ? 'Conversation' : 'New chat'}</h2>
      {conversation?.branchOf && <BranchedFrom parentId={conversation.branchOf.conversationId} />}
      <div
        class="messages"
        role="log"
        aria-label="Messages"
        ref={log}
        onScroll={(e) => (pinned.current = e.currentTarget.scrollHeight - e.currentTarget.scrollTop - e.currentTarget.clientHeight < 40)}
      >
        <ol>
        {items.map((item) => (
          <Message
            key={item.id}
            role={item.role}
            text={item.content}
            images={imagesOf(item.parts)}
            onBranch={idle ? () => branch(item) : undefined}
            onEdit={idle && item.role === 'user' ? () => setEditing(item.id) : undefined}
            editing={editing === item.id}
            onSaveEdit={(text) => saveEdit(item, text)}
            onCancelEdit={() => (setEditing(undefined), setActionError(undefined))}
          />
        ))}
        {sent !== undefined && <Message role="user" text={sent.text} images={sent.images} />}
        {answer && (answer.text || busy ? <Message role="assistant" text={answer.text} answer={answer} /> : <Ending answer={answer} />)}
        </ol>
      </div>
      {actionError && (
        <p role="alert" class="error chat-action-error">
          {actionError}
        </p>
      )}
      {!conversationId && !items.length && sent === undefined && <p class="hint">Write a message to start a conversation.</p>}
      <Composer busy={busy} onSend={send} onStop={stop} models={models} />
    </div>
  );
}

/** "Branched from <parent>": the parent's title when the user may still open it. */
function BranchedFrom({ parentId }: { parentId: string }) {
  const [title, setTitle] = useState<string | null>();
  useEffect(() => {
    call<{ conversation: ConversationView }>('chat/getConversation', { conversationId: parentId }).then(
      (r) => setTitle(r.conversation.title || 'Untitled conversation'),
      () => setTitle(null),
    );
  }, [parentId]);
  if (title === undefined) return null;
  return (
    <p class="branched-from">
      Branched from{' '}
      {title === null ? (
        'a conversation you can no longer open'
      ) : (
        <a href={`/c/${parentId}`} onClick={onLinkClick(`/c/${parentId}`)}>
          {title}
        </a>
      )}
    </p>
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
