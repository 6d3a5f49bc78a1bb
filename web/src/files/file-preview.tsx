import { useEffect, useState } from 'preact/hooks';
import { sizeOf, type StoredFile } from './upload';

/** Types whose bytes are text to show as they are. */
const TEXT = /^(text\/|application\/json)/;
const PREVIEW_CHARS = 4000;

/** A file shown: an image as itself, a generated video in the browser's player, a text file's beginning, and for PDF and Word its facts and a download. */
export function FilePreview({ file, onClose }: { file: StoredFile; onClose(): void }) {
  const [text, setText] = useState<string>();
  useEffect(() => {
    setText(undefined);
    if (!TEXT.test(file.mimeType)) return;
    // The first bytes only (Range): a preview never downloads a whole large file.
    fetch(file.contentUrl, { credentials: 'same-origin', headers: { range: `bytes=0-${PREVIEW_CHARS * 2}` } })
      .then((r) => (r.ok ? r.text() : ''))
      .then((t) => setText(t.slice(0, PREVIEW_CHARS)), () => setText(''));
  }, [file.id]);
  return (
    <section class="file-preview" aria-labelledby="preview-title">
      <div class="preview-head">
        <h3 id="preview-title">{file.filename}</h3>
        <button type="button" onClick={onClose}>
          Close preview
        </button>
      </div>
      <p class="hint">
        {file.mimeType} · {sizeOf(file.size)}
        {file.width && file.height ? ` · ${file.width}×${file.height}` : ''}
      </p>
      {file.kind === 'image' ? (
        <img class="preview-image" src={file.contentUrl} alt={file.filename} />
      ) : file.mimeType.startsWith('video/') ? (
        <video class="preview-image" controls preload="metadata" src={file.contentUrl} aria-label={file.filename} />
      ) : text !== undefined ? (
        <pre class="preview-text">{text || '(empty)'}</pre>
      ) : (
        <p class="hint">{file.textStatus === 'ready' ? 'The assistant can read this document. Download it to see it as it is.' : 'Download the file to open it.'}</p>
      )}
      <a class="button" href={file.contentUrl} download={file.filename}>
        Download
      </a>
    </section>
  );
}
