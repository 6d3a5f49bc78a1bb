import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { useCapabilities } from '../shared/capabilities';
import { DropZone, AttachFileButton } from './attachments';
import { sizeOf, uploadError, uploadFile, type StoredFile } from './upload';
import { FilePreview } from './file-preview';
import { Note } from '../shared/note';

interface Hit {
  fileId: string;
  filename: string;
  page: number | null;
  excerpt: string;
}
const PAGE = 200;

/** Every file of the user (files/listFiles, all pages): the library is bounded by the per-user count (PARLEY_FILES_MAX_PER_USER). */
async function allFiles(): Promise<StoredFile[]> {
  const out: StoredFile[] = [];
  let before: string | null | undefined;
  do {
    const r = await call<{ files: StoredFile[]; nextBefore: string | null }>('files/listFiles', { limit: PAGE, ...(before ? { before } : {}) });
    out.push(...r.files);
    before = r.nextBefore;
  } while (before);
  return out;
}

/** The user's library: upload (button or drop), search by words or meaning, preview, download, delete, the quota used. */
export function FilesPage() {
  const caps = useCapabilities();
  const [files, setFiles] = useState<StoredFile[]>();
  const [chosen, setChosen] = useState<string>();
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<'text' | 'semantic' | 'hybrid'>('text');
  const [hits, setHits] = useState<Hit[]>();
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  const [uploading, setUploading] = useState(0);
  const load = () => allFiles().then(setFiles, (err) => setNote({ error: err instanceof ApiError ? err.message : 'Your files could not be listed.' }));
  useEffect(() => void load(), []);
  // A document's text is read after its upload: look again while one is still being read.
  useEffect(() => {
    if (!files?.some((f) => f.textStatus === 'pending')) return;
    const timer = setTimeout(load, 2000);
    return () => clearTimeout(timer);
  }, [files]);

  const upload = async (list: File[]) => {
    setNote({});
    setUploading((n) => n + list.length);
    for (const file of list) {
      try {
        const stored = await uploadFile(file);
        setNote({ done: `Uploaded ${stored.filename}.` });
      } catch (err) {
        setNote({ error: uploadError(file, err) });
      } finally {
        setUploading((n) => n - 1);
      }
    }
    await load();
  };
  const search = async (e: Event) => {
    e.preventDefault();
    if (!query.trim()) return setHits(undefined);
    try {
      setHits((await call<{ hits: Hit[] }>('files/searchFiles', { query: query.trim(), mode, limit: 20 })).hits);
    } catch (err) {
      setNote({ error: err instanceof ApiError ? err.message : 'The search failed.' });
    }
  };
  const remove = async (f: StoredFile) => {
    if (!confirm(`Delete "${f.filename}"? Conversations it was sent in keep their text, not the file.`)) return;
    try {
      await call('files/deleteFile', { fileId: f.id });
      setNote({ done: `Deleted ${f.filename}.` });
      if (chosen === f.id) setChosen(undefined);
      await load();
    } catch (err) {
      setNote({ error: err instanceof ApiError ? err.message : 'The file could not be deleted.' });
    }
  };
  const used = files?.reduce((sum, f) => sum + f.size, 0) ?? 0;
  const current = files?.find((f) => f.id === chosen);

  return (
    <DropZone class="page files-page" label="Drop files to upload them" onFiles={(list) => void upload(list)}>
      <section aria-labelledby="files-title">
        <h2 id="files-title">Files</h2>
        <p class="hint">Documents and images you uploaded or the assistant made. Send them with a message and the assistant reads them. Drop files here to upload them.</p>
        {caps && files && (
          <p class="quota">
            Used {sizeOf(used)} of {sizeOf(caps.files.quotaBytes)} · {files.length} of {caps.files.maxFiles} files · up to {sizeOf(caps.files.maxBytes)} a file
          </p>
        )}
        <div class="files-tools">
          <AttachFileButton id="upload-file" onFiles={(list) => void upload(list)} />
          {uploading > 0 && <span class="hint">Uploading {uploading}…</span>}
        </div>
        <Note {...note} />
        <form class="files-search" role="search" onSubmit={search}>
          <label for="files-query">Search your documents</label>
          <input id="files-query" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
          <label for="files-mode" class="visually-hidden">
            Search by
          </label>
          <select id="files-mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as typeof mode)}>
            <option value="text">By words</option>
            {caps?.files.semanticSearch && <option value="semantic">By meaning</option>}
            {caps?.files.semanticSearch && <option value="hybrid">Words and meaning</option>}
          </select>
          <button type="submit">Search</button>
        </form>
        {hits && (
          <section aria-label="Search results">
            {hits.length === 0 ? (
              <p class="hint">Nothing found.</p>
            ) : (
              <ol class="file-hits">
                {hits.map((h, i) => (
                  <li key={i}>
                    <button type="button" class="link" onClick={() => setChosen(h.fileId)}>
                      {h.filename}
                      {h.page ? `, page ${h.page}` : ''}
                    </button>
                    <p class="hint">{h.excerpt}</p>
                  </li>
                ))}
              </ol>
            )}
          </section>
        )}
        {files && files.length === 0 && <p class="hint">No files yet.</p>}
        {files && files.length > 0 && (
          <ul class="file-list" aria-label="Your files">
            {files.map((f) => (
              <li key={f.id} class={f.id === chosen ? 'current' : undefined}>
                {f.thumbnailUrl ? <img src={f.thumbnailUrl} alt="" class="thumb" loading="lazy" /> : <span class="thumb doc" aria-hidden="true">{extensionOf(f)}</span>}
                <span class="file-name">
                  <button type="button" class="link" aria-label={`Preview ${f.filename}`} onClick={() => setChosen(f.id)}>
                    {f.filename}
                  </button>
                  <span class="hint">
                    {sizeOf(f.size)} · {new Date(f.createdAt).toLocaleDateString()}
                    {f.source === 'generated' ? ' · made by the assistant' : ''}
                    {f.textStatus === 'pending' ? ' · reading…' : f.textStatus === 'failed' ? ` · could not be read: ${f.textError}` : ''}
                  </span>
                </span>
                <a class="button" href={f.contentUrl} download={f.filename} aria-label={`Download ${f.filename}`}>
                  Download
                </a>
                <button type="button" aria-label={`Delete ${f.filename}`} onClick={() => remove(f)}>
                  Delete
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
      {current && <FilePreview file={current} onClose={() => setChosen(undefined)} />}
    </DropZone>
  );
}

const extensionOf = (f: StoredFile) => (f.filename.includes('.') ? f.filename.split('.').pop()!.slice(0, 4).toUpperCase() : 'DOC');
