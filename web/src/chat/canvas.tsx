import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { Markdown } from '../shared/markdown-view';
import { Note } from '../shared/note';

interface Widget {
  id: string;
  title: string;
  document: { topic?: string; content?: string } | null;
}
interface ThreadMessage {
  id: string;
  data: { type?: string; content?: string };
  createdAt: string;
}
interface Thread {
  id: string;
  messages: ThreadMessage[];
}

const editsOf = (messages: ThreadMessage[]) => messages.filter((m) => m.data.type === 'edit' && typeof m.data.content === 'string');
const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A canvas's title, as a button that opens it beside the chat. */
export function CanvasButton({ widgetId, onOpen }: { widgetId: string; onOpen(id: string): void }) {
  const [title, setTitle] = useState<string>();
  useEffect(() => void call<Widget>('widget/get', { widgetId }).then((w) => setTitle(w.title), () => setTitle('a canvas')), [widgetId]);
  return (
    <button type="button" class="canvas-open" onClick={() => onOpen(widgetId)}>
      Open canvas: {title ?? '…'}
    </button>
  );
}

/**
 * A canvas (a document the assistant wrote, `widget/get`) beside the chat, to read and edit. The
 * widget keeps the assistant's text; the user's versions are messages of their thread for it
 * (`widget/getOrCreateThread`, `widget/addThreadMessage` with `{type: "edit", content}`), the
 * newest of which is the canvas as they left it.
 */
export function CanvasPanel({ widgetId, onClose }: { widgetId: string; onClose(): void }) {
  const [widget, setWidget] = useState<Widget>();
  const [thread, setThread] = useState<Thread>();
  const [content, setContent] = useState('');
  const [editing, setEditing] = useState(false);
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  /** The user's saved versions, newest first, once asked for; `older`: the cursor for the ones before. */
  const [versions, setVersions] = useState<{ list: ThreadMessage[]; older: string | null }>();
  const open = () =>
    Promise.all([call<Widget>('widget/get', { widgetId }), call<{ thread: Thread }>('widget/getOrCreateThread', { widgetId })]).then(
      ([w, t]) => {
        setWidget(w);
        setThread(t.thread);
        setContent(editsOf(t.thread.messages).at(-1)?.data.content ?? w.document?.content ?? '');
      },
      (err) => setNote({ error: err instanceof ApiError ? err.message : 'The canvas could not be opened.' }),
    );
  useEffect(() => void open(), [widgetId]);
  const failed = (err: unknown, what: string) => setNote({ error: err instanceof ApiError ? err.message : what });
  const save = async (e: Event) => {
    e.preventDefault();
    if (!thread) return;
    try {
      const added = await call<ThreadMessage>('widget/addThreadMessage', { threadId: thread.id, data: { type: 'edit', content } });
      setThread({ ...thread, messages: [...thread.messages, added] });
      setEditing(false);
      setVersions(undefined);
      setNote({ done: 'Saved.' });
    } catch (err) {
      failed(err, 'The canvas could not be saved.');
    }
  };
  // Versions (widget/listThreadMessages), a page at a time, newest first.
  const loadVersions = async (before?: string) => {
    if (!thread) return;
    try {
      const page = await call<{ messages: ThreadMessage[]; nextBefore: string | null }>('widget/listThreadMessages', { threadId: thread.id, ...(before ? { before } : {}) });
      setVersions((had) => ({ list: [...(before ? (had?.list ?? []) : []), ...editsOf(page.messages).reverse()], older: page.nextBefore }));
    } catch (err) {
      failed(err, 'The versions could not be loaded.');
    }
  };
  // The assistant's version again: the thread archived (kept, read-only) or deleted (which frees
  // its room under the caps on saved versions); either way the next open starts a new one.
  const reset = async (op: 'widget/archiveThread' | 'widget/deleteThread', question: string, done: string) => {
    if (!thread || !confirm(question)) return;
    try {
      await call(op, { threadId: thread.id });
      setVersions(undefined);
      await open();
      setNote({ done });
    } catch (err) {
      failed(err, 'The canvas could not be reset.');
    }
  };
  const startOver = () => reset('widget/archiveThread', "Go back to the assistant's version? Your versions are kept, archived, and no longer shown here.", "Back to the assistant's version.");
  const deleteVersions = () => reset('widget/deleteThread', "Delete your versions of this canvas for good? The assistant's version stays.", 'Your versions were deleted.');
  const saved = !!thread && editsOf(thread.messages).length > 0;
  return (
    <aside class="canvas-panel" aria-labelledby="canvas-title">
      <div class="canvas-head">
        <h3 id="canvas-title">{widget?.title ?? 'Canvas'}</h3>
        {widget && !editing && (
          <button type="button" onClick={() => (setEditing(true), setNote({}))}>
            Edit
          </button>
        )}
        <button type="button" onClick={onClose}>
          Close canvas
        </button>
      </div>
      <Note {...note} />
      {widget && !editing && (saved || versions) && (
        <details class="canvas-versions" onToggle={(e) => (e.currentTarget as HTMLDetailsElement).open && !versions && void loadVersions()}>
          <summary>Your versions</summary>
          {versions && (
            <ol aria-label="Your versions, newest first">
              {versions.list.map((v) => (
                <li key={v.id}>
                  {when(v.createdAt)}{' '}
                  <button type="button" aria-label={`Open the version of ${when(v.createdAt)}`} onClick={() => (setContent(v.data.content ?? ''), setEditing(true), setNote({ done: 'This version is in the editor: Save canvas makes it the newest.' }))}>
                    Open
                  </button>
                </li>
              ))}
            </ol>
          )}
          {versions?.older && (
            <button type="button" onClick={() => void loadVersions(versions.older!)}>
              Older versions
            </button>
          )}
          <div class="edit-buttons">
            <button type="button" onClick={() => void startOver()}>
              Back to the assistant's version
            </button>
            <button type="button" onClick={() => void deleteVersions()}>
              Delete your versions
            </button>
          </div>
        </details>
      )}
      {editing ? (
        <form class="canvas-edit" onSubmit={save}>
          <label for="canvas-text">Canvas text (Markdown)</label>
          <textarea id="canvas-text" rows={16} value={content} onInput={(e) => setContent(e.currentTarget.value)} />
          <div class="edit-buttons">
            <button type="submit">Save canvas</button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        widget && <Markdown text={content} class="canvas-body" />
      )}
    </aside>
  );
}
