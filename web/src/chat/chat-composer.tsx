import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { prepareImage } from './chat-images';
import { ModelPicker, type ModelChoice } from './chat-models';
import { MessageBox } from '../shared/message-box';
import { AttachFileButton, AttachmentList, type Attachments } from '../files/attachments';
import { filesOf, type StoredFile } from '../files/upload';
import { Icon } from '../shared/icons';

/** `chat/stream` takes up to 16 images a turn. */
const MAX_IMAGES = 16;

interface Props {
  busy: boolean;
  onSend(message: string, images: string[], files: StoredFile[]): void;
  onStop(): void;
  models: { choices: ModelChoice[]; model: string | undefined; choose(id: string): void };
  /** The files going with the message: the chat owns them, so a file dropped anywhere on it lands here. */
  attachments: Attachments;
  /** More tools beside the attach buttons (the microphone). */
  tools?: ComponentChildren;
  /** Text to put in the box (a transcribed recording), added to what is there. */
  insert?: { text: string; n: number };
}

/** The box to write in, the images to send with the message, and the model to answer it. */
export function Composer({ busy, onSend, onStop, models, attachments, tools, insert }: Props) {
  const [text, setText] = useState('');
  const [images, setImages] = useState<{ key: number; url: string }[]>([]);
  const nextKey = useRef(0);
  const [preparing, setPreparing] = useState(0);
  const [error, setError] = useState<string>();
  const box = useRef<HTMLTextAreaElement>(null);
  // Focused before the first paint, so nothing typed can arrive before the focus does (chat-message.tsx).
  useLayoutEffect(() => box.current?.focus(), []);
  useEffect(() => {
    if (!insert?.text) return;
    setText((t) => (t.trim() ? `${t.trimEnd()} ${insert.text}` : insert.text));
    box.current?.focus();
  }, [insert?.n]);
  const ready = (text.trim() !== '' || images.length > 0 || attachments.ids().length > 0) && preparing === 0 && !attachments.uploading;

  const submit = (e?: Event) => {
    e?.preventDefault();
    if (!ready || busy) return;
    onSend(text.trim(), images.map((i) => i.url), attachments.files());
    setText('');
    setImages([]);
    attachments.clear();
  };
  // A pasted screenshot or file is uploaded like a chosen one; pasted text stays text.
  const paste = (e: ClipboardEvent) => {
    const files = filesOf(e.clipboardData);
    if (!files.length) return;
    e.preventDefault();
    void attachments.add(files);
  };

  const attach = async (input: HTMLInputElement) => {
    const files = [...(input.files ?? [])];
    input.value = ''; // the same file can be chosen again after removing it
    setError(undefined);
    const room = MAX_IMAGES - images.length;
    if (files.length > room) setError(`At most ${MAX_IMAGES} images go with one message.`);
    setPreparing((n) => n + Math.min(files.length, room));
    for (const file of files.slice(0, Math.max(0, room))) {
      try {
        const url = await prepareImage(file);
        setImages((list) => [...list, { key: nextKey.current++, url }]);
      } catch {
        setError(`"${file.name}" could not be read as an image.`);
      } finally {
        setPreparing((n) => n - 1);
      }
    }
  };

  const remove = (i: number) => {
    setImages((list) => list.filter((_, j) => j !== i));
    box.current?.focus();
  };

  return (
    <form class="composer chat-composer" onSubmit={submit}>
      {images.length > 0 && (
        <ul class="attachments" aria-label="Images to send">
          {images.map(({ key, url }, i) => (
            <li key={key}>
              <img src={url} alt={`Image ${i + 1} to send`} />
              <button type="button" aria-label={`Remove image ${i + 1}`} onClick={() => remove(i)}>
                <Icon name="close" />
              </button>
            </li>
          ))}
        </ul>
      )}
      <AttachmentList attachments={attachments} />
      {preparing > 0 && <p class="hint">Preparing the image…</p>}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="composer-row">
        <MessageBox boxRef={box} rows={3} value={text} placeholder="Message Parley (Enter sends, Shift+Enter adds a line)" onInput={setText} onEnter={submit} onPaste={paste} />
        {busy ? (
          <button type="button" onClick={onStop}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={!ready}>
            Send
          </button>
        )}
      </div>
      <div class="composer-tools">
        <span class="attach">
          <input id="attach-image" class="visually-hidden" type="file" accept="image/*" multiple onChange={(e) => attach(e.currentTarget)} />
          <label for="attach-image" class="button">
            Attach image
          </label>
        </span>
        <AttachFileButton id="attach-file" onFiles={(files) => void attachments.add(files)} />
        {tools}
        <ModelPicker choices={models.choices} model={models.model} onChoose={models.choose} />
      </div>
    </form>
  );
}
