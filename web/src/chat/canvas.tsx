import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { Markdown } from '../shared/markdown-view';
import { Note } from '../shared/note';

interface Widget {
  id: string;
  title: string;
  document: { topic?: string; content?: string } | null;
}
interface Thread {
  id: string;
  messages: { id: string; data: { type?: string; content?: string } }[];
}

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
  useEffect(() => {
    Promise.all([call<Widget>('widget/get', { widgetId }), call<{ thread: Thread }>('widget/getOrCreateThread', { widgetId })]).then(
      ([w, t]) => {
        setWidget(w);
        setThread(t.thread);
        const edits = t.thread.messages.filter((m) => m.data.type === 'edit' && typeof m.data.content === 'string');
        setContent(edits.at(-1)?.data.content ?? w.document?.content ?? '');
      },
      (err) => setNote({ error: err instanceof ApiError ? err.message : 'The canvas could not be opened.' }),
    );
  }, [widgetId]);
  const save = async (e: Event) => {
    e.preventDefault();
    if (!thread) return;
    try {
      await call('widget/addThreadMessage', { threadId: thread.id, data: { type: 'edit', content } });
      setEditing(false);
      setNote({ done: 'Saved.' });
    } catch (err) {
      setNote({ error: err instanceof ApiError ? err.message : 'The canvas could not be saved.' });
    }
  };
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
