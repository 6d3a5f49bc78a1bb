import type { AiImage, AiMessage } from '../ai/ai.types';
import type { AppDeps } from '../deps';
import type { FileRow } from '../db/schema';
import { findBlob, findFileById, hasDocuments } from './file.store';

/** A file sent with a message, as its user item keeps it (`parts`). */
export type FilePart = { type: 'input_file'; fileId: string; filename: string; mimeType: string; kind: 'image' | 'document' };

export const filePartOf = (f: FileRow): FilePart => ({ type: 'input_file', fileId: f.id, filename: f.filename, mimeType: f.mimeType, kind: f.kind });

/** Whether a turn is offered the file tools: the user has documents, or the conversation does. */
export async function offersFileTools(deps: AppDeps, userId: string, conversationId: string): Promise<boolean> {
  return deps.store.read((tx) => hasDocuments(tx, userId, conversationId));
}

/**
 * What the model is given of a message's files: an image as the image itself (a data URL of the
 * stored, metadata-free bytes, since the provider cannot fetch Parley's URLs), a document as a
 * line naming it, which `read_file` reads. A file deleted since is named as gone.
 */
export async function filesIntoMessage(deps: AppDeps, message: AiMessage, parts: FilePart[]): Promise<AiMessage> {
  const images: AiImage[] = [...(message.images ?? [])];
  const notes: string[] = [];
  for (const part of parts) {
    const file = await deps.store.read((tx) => findFileById(tx, part.fileId));
    if (!file) {
      notes.push(`[Attached file ${part.filename} was deleted since.]`);
      continue;
    }
    if (file.kind === 'image') {
      const blob = await deps.store.read((tx) => findBlob(tx, file.sha256));
      if (!blob) continue;
      const bytes = await deps.files.get(blob.key).bytes();
      images.push({ imageUrl: `data:${file.mimeType};base64,${Buffer.from(bytes).toString('base64')}` });
    } else notes.push(`[Attached document: ${file.filename} (file id ${file.id}, ${file.mimeType}). Read it with read_file.]`);
  }
  const content = notes.length ? `${message.content}\n\n${notes.join('\n')}` : message.content;
  return { ...message, content, ...(images.length ? { images } : {}) };
}
