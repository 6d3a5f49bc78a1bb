import type { ComponentChildren } from 'preact';
import { useContext, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { AnsweringAssistant, AssistantAvatar } from './assistant-picker';
import type { Item } from '../shared/api';
import { Markdown } from '../shared/markdown-view';
import type { Answer } from './turn';
import type { AnswerExtras } from './answer-parts';
import { ExtrasAfter, ExtrasBefore, ModelName } from './answer-extras';
import { ToolApprovals } from './tool-approval';
import { FileLinks } from '../files/upload';

interface Props {
  role: Item['role'];
  text: string;
  images?: string[];
  answer?: Answer;
  /** A stored message offers its actions: branch from it, and edit it when it is the user's. */
  onBranch?(): void;
  onEdit?(): void;
  editing?: boolean;
  onSaveEdit?(text: string): void;
  onCancelEdit?(): void;
  /** An answer's model, reasoning, tools, documents, images and canvases. */
  extras?: AnswerExtras;
  /** The files sent with a user's message. */
  files?: { fileId: string; filename: string }[];
  /** Copy, regenerate, read aloud, rate (a stored answer). */
  actions?: ComponentChildren;
  onOpenCanvas?(widgetId: string): void;
}

export function Message({ role, text, images = [], answer, onBranch, onEdit, editing, onSaveEdit, onCancelEdit, extras, files = [], actions, onOpenCanvas }: Props) {
  const editButton = useRef<HTMLButtonElement>(null);
  // Leaving the edit box (Cancel, Escape) gives the focus back to the button that opened it.
  const wasEditing = useRef(false);
  useEffect(() => {
    if (wasEditing.current && !editing) editButton.current?.focus();
    wasEditing.current = !!editing;
  }, [editing]);
  const assistant = useContext(AnsweringAssistant);
  const who = role === 'user' ? 'You' : (assistant?.name ?? 'Parley');
  return (
    <li class={`message ${role}`} aria-busy={answer && (answer.state === 'waiting' || answer.state === 'streaming') ? 'true' : undefined}>
      {role === 'assistant' && assistant?.avatarUrl ? (
        <h3 class="answer-by">
          <AssistantAvatar assistant={assistant} />
          {who}
        </h3>
      ) : (
        <h3 class="visually-hidden">{who}</h3>
      )}
      {images.length > 0 && <MessageImages urls={images} />}
      {files.length > 0 && <FileLinks files={files} />}
      {extras && <ExtrasBefore extras={extras} />}
      {answer?.responseId && extras && extras.approvals.length > 0 && <ToolApprovals responseId={answer.responseId} approvals={extras.approvals} />}
      {editing ? (
        <EditForm text={text} allowEmpty={images.length > 0 || files.length > 0} onSave={onSaveEdit!} onCancel={onCancelEdit!} />
      ) : role === 'assistant' ? (
        <Markdown text={text} />
      ) : (
        text && <p class="plain">{text}</p>
      )}
      {extras && <ExtrasAfter extras={extras} onOpenCanvas={onOpenCanvas} />}
      {role === 'assistant' && <ModelName model={extras?.model} />}
      {answer?.state === 'waiting' && !extras?.approvals.length && <p class="hint">Thinking…</p>}
      {answer?.state === 'stopped' && <p class="hint">Stopped.</p>}
      {answer?.state === 'failed' && (
        <p role="alert" class="error">
          {answer.error}
        </p>
      )}
      {actions}
      {!editing && (onEdit || onBranch) && (
        <div class="message-actions">
          {onEdit && (
            <button type="button" ref={editButton} onClick={onEdit}>
              Edit
            </button>
          )}
          {onBranch && (
            <button type="button" onClick={onBranch}>
              Branch from here
            </button>
          )}
        </div>
      )}
    </li>
  );
}

/** The page's CSP shows `data:` images only: an image the message names by address is a link to it. */
function MessageImages({ urls }: { urls: string[] }) {
  return (
    <ul class="message-images">
      {urls.map((url, i) => (
        <li key={i}>
          {url.startsWith('data:image/') ? (
            <img src={url} alt={`Attached image ${i + 1}`} />
          ) : /^https?:/i.test(url) ? (
            <a href={url} target="_blank" rel="noopener noreferrer">
              Attached image {i + 1} (opens its address)
            </a>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/** Editing a message that carries images keeps them: the text alone may then be empty. */
function EditForm({ text, allowEmpty, onSave, onCancel }: { text: string; allowEmpty: boolean; onSave(text: string): void; onCancel(): void }) {
  const [value, setValue] = useState(text);
  const box = useRef<HTMLTextAreaElement>(null);
  // Before the first paint (a layout effect): a passive effect runs a frame later, and could move
  // the caret to the end after the user (or a test) had already selected the text to replace it,
  // so what they typed was added to the old text instead.
  useLayoutEffect(() => {
    box.current?.focus();
    box.current?.setSelectionRange(value.length, value.length);
  }, []);
  const ok = allowEmpty || value.trim() !== '';
  const save = (e: Event) => {
    e.preventDefault();
    if (ok) onSave(value.trim());
  };
  return (
    <form class="edit-message" onSubmit={save}>
      <label>
        <span class="visually-hidden">Edit your message</span>
        <textarea
          ref={box}
          rows={3}
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') onCancel();
            else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) save(e);
          }}
        />
      </label>
      <div class="edit-buttons">
        <button type="submit" disabled={!ok}>
          Save and send
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
