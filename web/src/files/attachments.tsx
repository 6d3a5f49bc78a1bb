import './files.css';
import { useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { filesOf, sizeOf, uploadError, uploadFile, type StoredFile } from './upload';
import { Icon } from '../shared/icons';

/** `chat/stream` and `chat/streamDeepResearch` take up to 10 files a turn (docs/files.md). */
export const MAX_FILES = 10;

export interface Attachment {
  key: number;
  name: string;
  state: 'uploading' | 'ready' | 'failed';
  stored?: StoredFile;
}

/**
 * The files going with the next message: each is uploaded as soon as it is chosen, dropped or
 * pasted (so sending does not wait for it), and sent by id in `files`.
 */
export function useAttachments() {
  const [list, setList] = useState<Attachment[]>([]);
  const [error, setError] = useState<string>();
  const next = useRef(0);
  const add = async (files: File[]) => {
    setError(undefined);
    const room = MAX_FILES - list.length;
    if (files.length > room) setError(`At most ${MAX_FILES} files go with one message.`);
    await Promise.all(
      files.slice(0, Math.max(0, room)).map(async (file) => {
        const key = next.current++;
        setList((l) => [...l, { key, name: file.name || 'Pasted file', state: 'uploading' }]);
        try {
          const stored = await uploadFile(file);
          setList((l) => l.map((a) => (a.key === key ? { ...a, state: 'ready', stored, name: stored.filename } : a)));
        } catch (err) {
          setList((l) => l.filter((a) => a.key !== key));
          setError(uploadError(file, err));
        }
      }),
    );
  };
  return {
    list,
    error,
    add,
    remove: (key: number) => setList((l) => l.filter((a) => a.key !== key)),
    clear: () => (setList([]), setError(undefined)),
    uploading: list.some((a) => a.state === 'uploading'),
    ids: () => list.flatMap((a) => (a.stored ? [a.stored.id] : [])),
    files: () => list.flatMap((a) => (a.stored ? [a.stored] : [])),
  };
}
export type Attachments = ReturnType<typeof useAttachments>;

/** The chosen files, each with its state and a remove button. */
export function AttachmentList({ attachments }: { attachments: Attachments }) {
  if (!attachments.list.length && !attachments.error) return null;
  return (
    <>
      {attachments.list.length > 0 && (
        <ul class="file-chips" aria-label="Files to send">
          {attachments.list.map((a) => (
            <li key={a.key} class={a.state}>
              <span class="file-chip-name">{a.name}</span>
              <span class="hint">{a.state === 'uploading' ? ' uploading…' : a.stored ? ` ${sizeOf(a.stored.size)}` : ''}</span>
              <button type="button" aria-label={`Remove ${a.name}`} onClick={() => attachments.remove(a.key)}>
                <Icon name="close" />
              </button>
            </li>
          ))}
        </ul>
      )}
      {attachments.error && (
        <p role="alert" class="error">
          {attachments.error}
        </p>
      )}
    </>
  );
}

/** A button that opens the file chooser (any type the server keeps). */
export function AttachFileButton({ id, onFiles }: { id: string; onFiles(files: File[]): void }) {
  return (
    <span class="attach">
      <input
        id={id}
        class="visually-hidden"
        type="file"
        multiple
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          e.currentTarget.value = '';
          onFiles(files);
        }}
      />
      <label for={id} class="button">
        Attach file
      </label>
    </span>
  );
}

/**
 * An area files can be dropped on: it shows it is a target while one is dragged over it. Only
 * drags that carry files count (dragging selected text is not an upload).
 */
export function DropZone({ onFiles, children, class: className, label }: { onFiles(files: File[]): void; children: ComponentChildren; class?: string; label: string }) {
  const [over, setOver] = useState(false);
  const depth = useRef(0);
  const carriesFiles = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');
  return (
    <div
      class={`${className ?? ''} drop-zone${over ? ' drag-over' : ''}`}
      onDragEnter={(e) => carriesFiles(e) && (e.preventDefault(), depth.current++, setOver(true))}
      onDragOver={(e) => carriesFiles(e) && e.preventDefault()}
      onDragLeave={() => --depth.current <= 0 && ((depth.current = 0), setOver(false))}
      onDrop={(e) => {
        if (!carriesFiles(e)) return;
        e.preventDefault();
        depth.current = 0;
        setOver(false);
        onFiles(filesOf(e.dataTransfer));
      }}
    >
      {children}
      {over && (
        <div class="drop-hint" aria-hidden="true">
          {label}
        </div>
      )}
    </div>
  );
}
