import { ApiError, failure, SIGNED_OUT } from '../shared/api';
import { Icon } from '../shared/icons';

/** A file as the files/* operations give it (docs/files.md, "The file"). */
export interface StoredFile {
  id: string;
  filename: string;
  mimeType: string;
  kind: 'image' | 'document';
  size: number;
  width: number | null;
  height: number | null;
  source: 'upload' | 'generated';
  textStatus: 'none' | 'pending' | 'ready' | 'failed';
  textError: string | null;
  contentUrl: string;
  thumbnailUrl: string | null;
  createdAt: string;
}

/**
 * Upload one file (`files/upload`, multipart with the file in the part `file`): the server
 * streams it to disk, decides its type from its bytes and strips an image's metadata. The
 * browser sends the session cookie and this page's Origin, which the server checks.
 */
export async function uploadFile(file: File, signal?: AbortSignal): Promise<StoredFile> {
  const form = new FormData();
  form.append('file', file, file.name || 'pasted');
  const res = await fetch('/api/files/upload', { method: 'POST', body: form, credentials: 'same-origin', signal });
  if (!res.ok) {
    if (res.status === 401) dispatchEvent(new Event(SIGNED_OUT));
    throw await failure(res);
  }
  return (await res.json()) as StoredFile;
}

/** Why an upload failed, in words a user can act on. */
export function uploadError(file: File, err: unknown): string {
  const name = file.name || 'The pasted file';
  if (!(err instanceof ApiError)) return `"${name}" could not be uploaded: Parley could not be reached.`;
  if (err.status === 413) return `"${name}" is too large to upload.`;
  if (err.status === 415) return `"${name}" is not a type Parley can keep (images, PDF, Word, text, Markdown, CSV, JSON, HTML).`;
  return `"${name}" could not be uploaded: ${err.message}`;
}

/** A size as people read it. */
export const sizeOf = (bytes: number) =>
  bytes < 1000 ? `${bytes} B` : bytes < 1e6 ? `${Math.round(bytes / 1e3)} kB` : bytes < 1e9 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e9).toFixed(2)} GB`;

/** The files a drop or a paste carries (a pasted screenshot is one), none for plain text. */
export const filesOf = (data: DataTransfer | null): File[] => [...(data?.files ?? [])];

/** Links to files (each opens the file, with the session's cookie), as a list: the documents an answer read, the files a message carried. */
export function FileLinks({ files, ordered }: { files: { fileId: string; filename: string }[]; ordered?: boolean }) {
  const items = files.map((f) => (
    <li key={f.fileId}>
      <a href={`/api/files/${encodeURIComponent(f.fileId)}/content`} target="_blank" rel="noopener">
        {!ordered && <Icon name="file" />}
        {f.filename}
      </a>
    </li>
  ));
  return ordered ? <ol>{items}</ol> : <ul class="sent-files" aria-label="Files sent">{items}</ul>;
}
