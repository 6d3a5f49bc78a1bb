import './chat.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, type Item } from '../shared/api';
import { forgetPending, pendingResponse, resumeAnswer, sendMessage, type Answer } from './turn';
import { adoptAddress, navigate, onLinkClick } from '../shared/router';
import { Message } from './chat-message';
import { Composer } from './chat-composer';
import { ModelNames, useModels } from './chat-models';
import { imagesOf, sentFilesOf } from './chat-images';
import { extrasOfParts, type AnswerExtras } from './answer-parts';
import { AnswerActions, type Rating } from './answer-actions';
import { CanvasPanel } from './canvas';
import { DropZone, useAttachments } from '../files/attachments';
import type { StoredFile } from '../files/upload';
import { useCapabilities } from '../shared/capabilities';
import { Recorder } from '../voice/recorder';
import { asJson, asMarkdown, download, exportOne, fileNameOf } from './transfer';
import { ShareControls } from './share-button';
import { BookmarkButton } from './bookmark-button';
import { ToolRules } from './tool-rules';
import { AnsweringAssistant, AssistantPicker, AssistantStarters, useAssistants, useModelBeside } from './assistant-picker';

interface Props {
  conversationId: string | undefined;
  /** The signed-in user: whether they own the conversation (and may share it) or it was shared with them. */
  userId: string;
  /** A message was sent or an answer ended: the list's order and titles change. */
  onActivity(): void;
}

/** An item as chat/getConversation gives it: a user message's images are in its `parts`. */
type StoredItem = Item & { parts?: unknown[] };
interface ConversationView {
  id: string;
  title: string;
  ownerId: string;
  groupChatId?: string | null;
  /** The assistant it goes on with (docs/assistants.md); null: Parley itself. */
  assistantId?: string | null;
  branchOf: { conversationId: string; itemId: string } | null;
}

/** Why chat/truncateConversationFromItem changed nothing, in words. */
const TRUNCATE_REFUSED: Record<string, string> = {
  GROUP_CONVERSATION: 'The messages of a group chat cannot be edited.',
  CONVERSATION_NOT_WRITABLE: 'You may not change this conversation.',
  ITEM_NOT_FOUND: 'This message is no longer in the conversation. Reload the page to see it as it is now.',
};

/**
 * Regenerating an answer makes a branch (docs/web.md): the conversation is copied up to the
 * question (`chat/branchConversation`), the copy's question taken off again, and the question
 * sent anew there. The branch's page finds what to send here when it opens.
 */
const resendKey = (conversationId: string) => `parley.resend.${conversationId}`;
interface Resend {
  text: string;
  images: string[];
  files: StoredFile[];
}

/** One conversation: its messages, the answer being written, and the box to write in. */
export function Chat({ conversationId, userId, onActivity }: Props) {
  const [items, setItems] = useState<StoredItem[]>([]);
  const [conversation, setConversation] = useState<ConversationView>();
  const [loadError, setLoadError] = useState<string>();
  const [actionError, setActionError] = useState<string>();
  const [sent, setSent] = useState<{ text: string; images: string[]; files: { fileId: string; filename: string }[] }>();
  const [answer, setAnswer] = useState<Answer>();
  const [editing, setEditing] = useState<string>();
  const [ratings, setRatings] = useState<Record<string, Rating>>({});
  const [canvas, setCanvas] = useState<string>();
  const [seenExtras, setSeenExtras] = useState<Record<string, Pick<AnswerExtras, 'reasoning' | 'activity'>>>({});
  // The answer being written, as the last event left it (read when it ends).
  const live = useRef<Answer>(undefined);
  const showAnswer = (a: Answer) => ((live.current = a), setAnswer(a));
  const [dictated, setDictated] = useState<{ text: string; n: number }>();
  const models = useModels();
  const assistants = useAssistants();
  // Who answers a conversation that has no assistant yet ('' : Parley itself).
  const [chosenAssistant, setChosenAssistant] = useState('');
  // The assistant that answers the next turn: the conversation's, else the one chosen for a new one.
  const answering = assistants?.find((a) => a.id === (conversationId && conversation?.assistantId ? conversation.assistantId : chosenAssistant));
  const turnModel = useModelBeside(models, answering);
  const attachments = useAttachments();
  const caps = useCapabilities();
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
    call<{ feedback: Rating[] }>('feedback/getFeedback', { conversationId: id }).then(
      (f) => setRatings(Object.fromEntries(f.feedback.map((x) => [x.itemId, x]))),
      () => undefined,
    );
    return r.items;
  };

  useEffect(() => {
    if (!conversationId || conversationId === created.current) return;
    const signal = following.current.signal;
    load(conversationId)
      .then((loaded) => {
        const resend = sessionStorage.getItem(resendKey(conversationId));
        if (resend && !signal.aborted) {
          sessionStorage.removeItem(resendKey(conversationId));
          const r = JSON.parse(resend) as Resend;
          return send(r.text, r.images, r.files);
        }
        const responseId = pendingResponse(conversationId);
        if (!responseId || signal.aborted) return;
        // The answer is stored as the conversation's last item once it ends: if it is there,
        // there is nothing to follow (the tab was away while it finished).
        if (loaded[loaded.length - 1]?.role !== 'user') return forgetPending(conversationId);
        return resumeAnswer(conversationId, responseId, { onAnswer: showAnswer }, signal).then(() => finish(conversationId));
      })
      .catch((err) => setLoadError(err instanceof ApiError && err.status < 500 ? 'This conversation does not exist, or you may not read it.' : 'The conversation could not be loaded.'));
  }, [conversationId]);

  const finish = async (id: string) => {
    if (following.current.signal.aborted) return;
    const loaded = await load(id).catch(() => undefined);
    // The reasoning and what the tools did are not all stored with the answer (memory notes,
    // docs/memory.md, never are): this page keeps what it saw on the stored answer while it is open.
    const seen = live.current?.extras;
    const stored = loaded?.filter((i) => i.role === 'assistant').at(-1);
    if (seen && stored && (seen.reasoning || seen.activity.length)) setSeenExtras((m) => ({ ...m, [stored.id]: { reasoning: seen.reasoning, activity: seen.activity } }));
    setSent(undefined);
    // The stored items now hold the answer, also a cut or stopped one: keep only its note.
    setAnswer((a) => (a && a.state !== 'done' ? { ...a, text: '' } : undefined));
    onActivity();
  };

  const send = async (message: string, images: string[], files: StoredFile[] = []) => {
    setSent({ text: message, images, files: files.map((f) => ({ fileId: f.id, filename: f.filename })) });
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
        onAnswer: showAnswer,
      },
      following.current.signal,
      { model: turnModel.model, images, files: files.map((f) => f.id), assistantId: conversation?.assistantId ? undefined : chosenAssistant || undefined },
    ).catch(() => setAnswer({ text: '', state: 'failed', error: 'The message could not be sent.', extras: extrasOfParts([]) }));
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
    // The images and files of the message stay with it.
    await send(text, imagesOf(item.parts), filesToResend(item));
  };

  /** A new answer to the question before `answer`, in a branch; this conversation keeps the old one. */
  const regenerate = async (answerItem: StoredItem) => {
    const index = items.findIndex((i) => i.id === answerItem.id);
    const question = items.slice(0, index).reverse().find((i) => i.role === 'user');
    if (!conversationId || !question) return;
    setActionError(undefined);
    try {
      const r = await call<{ conversation: { id: string } }>('chat/branchConversation', { conversationId, fromItemId: question.id });
      const copy = await call<{ items: StoredItem[] }>('chat/getConversation', { conversationId: r.conversation.id });
      const last = copy.items.at(-1);
      if (last) await call('chat/truncateConversationFromItem', { conversationId: r.conversation.id, fromItemId: last.id });
      const resend: Resend = { text: question.content, images: imagesOf(question.parts), files: filesToResend(question) };
      sessionStorage.setItem(resendKey(r.conversation.id), JSON.stringify(resend));
      onActivity();
      navigate(`/c/${r.conversation.id}`);
    } catch (err) {
      setActionError(err instanceof ApiError && err.status < 500 ? err.message : 'The answer could not be regenerated. Try again.');
    }
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

  const starters = assistants?.find((a) => a.id === chosenAssistant);
  if (loadError) return <p role="alert" class="page-message">{loadError}</p>;
  // A message's actions wait while an answer is being written: the history is still growing.
  const idle = !busy && sent === undefined && !!conversationId;
  const lastAnswer = [...items].reverse().find((i) => i.role === 'assistant')?.id;
  return (
    <div class={`chat-with-canvas${canvas ? ' canvas-open' : ''}`}>
    <DropZone class="chat" label="Drop files to send them with your message" onFiles={(files) => void attachments.add(files)}>
      <h2 class="visually-hidden">{conversationId ? 'Conversation' : 'New chat'}</h2>
      {conversation?.branchOf && <BranchedFrom parentId={conversation.branchOf.conversationId} />}
      {conversationId && conversation && (
        <div class="conversation-tools">
          <ShareControls conversation={conversation} userId={userId} />
          {!conversation.groupChatId && <BookmarkButton conversationId={conversationId} label="Bookmark conversation" />}
          <ToolRules conversationId={conversationId} version={items.length} />
          <ExportButtons conversationId={conversationId} title={conversation.title} />
        </div>
      )}
      <div
        class="messages"
        role="log"
        aria-label="Messages"
        ref={log}
        onScroll={(e) => (pinned.current = e.currentTarget.scrollHeight - e.currentTarget.scrollTop - e.currentTarget.clientHeight < 40)}
      >
        <ModelNames.Provider value={models.names}>
        <AnsweringAssistant.Provider value={answering}>
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
            files={sentFilesOf(item.parts)}
            extras={item.role === 'assistant' ? withSeen(extrasOfParts(item.parts), seenExtras[item.id]) : undefined}
            onOpenCanvas={setCanvas}
            actions={
              item.role === 'assistant' && idle ? (
                <AnswerActions
                  conversationId={conversationId!}
                  itemId={item.id}
                  text={item.content}
                  rating={ratings[item.id]}
                  onRated={(r) => setRatings((all) => { const next = { ...all }; if (r) next[item.id] = r; else delete next[item.id]; return next; })}
                  onRegenerate={item.id === lastAnswer ? () => regenerate(item) : undefined}
                  canSpeak={!!caps?.voice.speak}
                />
              ) : undefined
            }
          />
        ))}
        {sent !== undefined && <Message role="user" text={sent.text} images={sent.images} files={sent.files} />}
        {answer && (answer.text || busy ? <Message role="assistant" text={answer.text} answer={answer} extras={answer.extras} onOpenCanvas={setCanvas} /> : <Ending answer={answer} />)}
        </ol>
        </AnsweringAssistant.Provider>
        </ModelNames.Provider>
      </div>
      {actionError && (
        <p role="alert" class="error chat-action-error">
          {actionError}
        </p>
      )}
      {!conversationId && !items.length && sent === undefined && <p class="hint">Write a message to start a conversation.</p>}
      {!items.length && sent === undefined && starters && <AssistantStarters assistant={starters} onSend={(text) => void send(text, [])} />}
      <AssistantPicker assistants={assistants} chosen={chosenAssistant} current={conversationId ? conversation?.assistantId : undefined} onChoose={setChosenAssistant} />
      <Composer
        busy={busy}
        onSend={send}
        onStop={stop}
        models={turnModel.picker}
        attachments={attachments}
        insert={dictated}
        tools={caps?.voice.transcribe ? <Recorder maxBytes={caps.voice.maxRecordingBytes} onText={(text) => setDictated((d) => ({ text, n: (d?.n ?? 0) + 1 }))} /> : undefined}
      />
    </DropZone>
    {canvas && <CanvasPanel key={canvas} widgetId={canvas} onClose={() => setCanvas(undefined)} />}
    </div>
  );
}

const withSeen = (x: AnswerExtras, seen: Pick<AnswerExtras, 'reasoning' | 'activity'> | undefined): AnswerExtras => (seen ? { ...x, ...seen } : x);

/** The files a stored user message was sent with, as the composer would send them again. */
const filesToResend = (item: StoredItem): StoredFile[] => sentFilesOf(item.parts).map((f) => ({ id: f.fileId, filename: f.filename }) as StoredFile);

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

/** This conversation as a file: Markdown to read, JSON to bring back (docs/chat.md, "Export and import"). */
function ExportButtons({ conversationId, title }: { conversationId: string; title: string }) {
  const save = async (kind: 'md' | 'json') => {
    const c = await exportOne(conversationId);
    if (kind === 'md') download(fileNameOf(title, 'md'), asMarkdown([c]), 'text/markdown');
    else download(fileNameOf(title, 'json'), asJson([c]), 'application/json');
  };
  return (
    <p class="export-buttons">
      <button type="button" onClick={() => void save('md')}>
        Export as Markdown
      </button>
      <button type="button" onClick={() => void save('json')}>
        Export as JSON
      </button>
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
