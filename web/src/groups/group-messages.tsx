import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { renderMarkdown } from '../shared/markdown';
import type { GroupMessage } from './group-stream';
import { MessageBox } from '../shared/message-box';
import { MentionButtons } from './mention-buttons';
import { AssistantAvatar, type AssistantChoice } from '../chat/assistant-picker';

/** An answer of the assistant being written, by the message it answers; `failed` when none will come. */
export interface Pending {
  replyTo: string;
  text: string;
  /** The shared assistant answering (assistant.started says), else Parley's own. */
  name?: string;
  assistantId?: string;
  failed?: string;
}

const time = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/** The group's messages as a `log`: new ones are announced, and kept in sight unless the reader scrolled up. */
export function MessageLog(props: { messages: GroupMessage[]; pending: Pending[]; me: string | undefined; assistants?: AssistantChoice[]; onOlder?: () => void }) {
  const { messages, pending, me, assistants = [], onOlder } = props;
  // A shared assistant's avatar beside its name, as in a chat; one no longer listed signs by name alone.
  const byId = (id: string | null | undefined) => (id ? assistants.find((a) => a.id === id) : undefined);
  const log = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useEffect(() => {
    if (pinned.current && log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [messages, pending]);
  const failures = pending.filter((p) => p.failed);
  return (
    <div
      class="messages group-messages"
      role="log"
      aria-label="Messages"
      ref={log}
      tabIndex={0}
      onScroll={(e) => (pinned.current = e.currentTarget.scrollHeight - e.currentTarget.scrollTop - e.currentTarget.clientHeight < 40)}
    >
      {onOlder && (
        <button type="button" class="older" onClick={() => ((pinned.current = false), onOlder())}>
          Show older messages
        </button>
      )}
      {!messages.length && !pending.length && <p class="hint">No messages yet. Say hello, or write @ai to ask the assistant.</p>}
      <ol>
        {messages.map((m) => (
          <MessageItem key={m.id} message={m} mine={m.sender.id === me} assistant={byId(m.assistantId)} failed={failures.find((f) => f.replyTo === m.id)?.failed} />
        ))}
        {pending
          .filter((p) => !p.failed)
          .map((p) => (
            <li key={p.replyTo} class="group-message assistant" aria-busy="true">
              <p class="author">
                <AssistantAvatar assistant={byId(p.assistantId)} />
                <strong>{p.name ?? 'Assistant'}</strong> <span class="group-badge">AI</span>
              </p>
              {p.text ? <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(p.text) }} /> : <p class="hint">Thinking…</p>}
            </li>
          ))}
      </ol>
    </div>
  );
}

function MessageItem({ message, mine, assistant: answering, failed }: { message: GroupMessage; mine: boolean; assistant?: AssistantChoice; failed?: string }) {
  const assistant = message.role === 'assistant';
  // A shared assistant signs its answers with its name; Parley's own is "Assistant".
  const name = assistant ? (message.assistantId ? message.sender.name : 'Assistant') : message.sender.name || 'Former member';
  return (
    <li class={`group-message ${assistant ? 'assistant' : mine ? 'mine' : 'user'}`}>
      <p class="author">
        {assistant && <AssistantAvatar assistant={answering} />}
        <strong>{name}</strong>
        {assistant && <span class="group-badge">AI</span>}
        {mine && <span class="hint"> (you)</span>}
        <span class="hint"> · {time(message.createdAt)}</span>
      </p>
      {assistant ? <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(message.content) }} /> : <p class="plain">{message.content}</p>}
      {failed && (
        <p role="alert" class="error">
          The assistant could not answer: {failed}
        </p>
      )}
    </li>
  );
}

/** The box to write in: Enter sends, Shift+Enter adds a line. Resolves false when the message was not sent (it stays in the box). */
export function GroupComposer({ disabled, onSend, mentions = [] }: { disabled: boolean; onSend(message: string): Promise<boolean>; mentions?: string[] }) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  // Focused before the first paint, so nothing typed can arrive before the focus does (chat-message.tsx).
  useLayoutEffect(() => box.current?.focus(), []);
  const submit = async (e?: Event) => {
    e?.preventDefault();
    const message = text.trim();
    if (!message || sending || disabled) return;
    setSending(true);
    setText('');
    if (!(await onSend(message))) setText(message);
    setSending(false);
    box.current?.focus();
  };
  return (
    <form class="composer" onSubmit={submit}>
      <MessageBox
        boxRef={box}
        rows={2}
        value={text}
        disabled={disabled}
        placeholder="Message the group; @ai asks the assistant (Enter sends, Shift+Enter adds a line)"
        onInput={setText}
        onEnter={(e) => void submit(e)}
      />
      <button type="submit" disabled={disabled || sending || !text.trim()}>
        Send
      </button>
      {/* Then back to writing: the question follows the name. */}
      <MentionButtons text={text} names={mentions} disabled={disabled} onMention={(t) => (setText(t), box.current?.focus())} />
    </form>
  );
}
