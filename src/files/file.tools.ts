import type { AiTool } from '../ai/ai.types';
import type { AppDeps } from '../deps';
import type { FileRow } from '../db/schema';
import { AppError } from '../http/errors';
import { readableFile } from './file.routes';
import { readChunks } from './file-text.store';
import { findFileById } from './file.store';
import { searchDocuments } from './embeddings-search';
import { CHUNK_OVERLAP } from './extract-pending';
import { offersFileTools } from './files-for-turn';
import type { ToolSource } from '../tools/tool.types';

/** Characters of a document one `read_file` call hands the model, at most (about 2,000 tokens). */
export const READ_FILE_CHARS = 8000;
/** How long `read_file` waits for a document still being turned into text. */
const PENDING_WAIT_MS = 20_000;
/** Chunks in one part read by `read_file` (about READ_FILE_CHARS: chunks overlap, so a part is their new characters). */
const CHUNKS_PER_PART = 4;
/** Hits of `search_files` handed to the model, and the excerpt of each. */
const SEARCH_HITS = 5;
const HIT_CHARS = 600;

/**
 * The file tools, to the registry (src/tools/): offered when the turn has documents to read, the
 * user's, the conversation's, or its assistant's knowledge (checked for it by the turn).
 */
export const fileToolSource: ToolSource = {
  id: 'files',
  label: 'Files',
  priority: 70,
  async tools(turn) {
    const knowledgeFileIds = turn.assistant?.knowledgeFileIds ?? [];
    const offered = knowledgeFileIds.length > 0 || (await offersFileTools(turn.deps, turn.user.id, turn.conversationId));
    return offered ? fileTools(turn.deps, { userId: turn.user.id, conversationId: turn.conversationId, knowledgeFileIds }) : [];
  },
};

/**
 * The tools over the user's files (docs/files.md, "In chat and research"): `read_file` reads an
 * attached or owned document a part at a time, `search_files` searches the text of the user's
 * documents and of those attached to this conversation. Offered when the turn has documents to
 * read (src/files/files-for-turn.ts). `knowledgeFileIds`: an assistant's documents, read and
 * searched here besides the user's, though the user may not read them by id anywhere else.
 */
export function fileTools(deps: AppDeps, ctx: { userId: string; conversationId: string; knowledgeFileIds?: readonly string[]; apiKeyId?: string }): AiTool[] {
  return [
    {
      name: 'read_file',
      description:
        "Read the text of one of the user's documents (an attached PDF, Word file, web page, Markdown, CSV, JSON or text file), a part at a time. Call again with the next part when the text says it continues.",
      parameters: {
        type: 'object',
        properties: {
          fileId: { type: 'string', description: 'The id of the file, as given with the message or by search_files' },
          part: { type: 'integer', description: 'Which part to read, from 1 (default 1)' },
        },
        required: ['fileId'],
      },
      async run(args, emit, callId) {
        const fileId = typeof args.fileId === 'string' ? args.fileId : '';
        const part = Number.isInteger(args.part) && (args.part as number) > 0 ? (args.part as number) : 1;
        const file = ctx.knowledgeFileIds?.includes(fileId) ? await deps.store.read((tx) => findFileById(tx, fileId)) : await readable(deps, fileId, ctx.userId);
        emit({ type: 'read_file.in_progress', itemId: callId, fileId, ...(file ? { filename: file.filename } : {}) });
        const result = file ? await readPart(deps, file, part) : { error: `No file with the id ${fileId} is available.` };
        if ('error' in result) {
          emit({ type: 'read_file.completed', success: false, error: result.error });
          return result.error;
        }
        emit({ type: 'read_file.completed', success: true, content: result.content });
        return result.more ? `${result.content}\n\n[The document continues: read_file with part ${part + 1}.]` : `${result.content}\n\n[End of the document.]`;
      },
    },
    {
      name: 'search_files',
      description: "Search the text of the user's documents for passages about something; returns excerpts with their file ids.",
      parameters: { type: 'object', properties: { query: { type: 'string', description: 'Words to look for' } }, required: ['query'] },
      async run(args, emit, callId) {
        const query = typeof args.query === 'string' ? args.query : '';
        emit({ type: 'file_search.in_progress', itemId: callId, query });
        // By words and meaning when embeddings are set up (docs/files.md, "Semantic search").
        const { hits } = await searchDocuments(deps, { userId: ctx.userId, query, conversationId: ctx.conversationId, alsoFileIds: ctx.knowledgeFileIds, limit: SEARCH_HITS, apiKeyId: ctx.apiKeyId });
        emit({ type: 'file_search.completed', itemId: callId, results: hits.map((h) => ({ fileId: h.fileId, filename: h.filename, page: h.page })) });
        if (!hits.length) return "Nothing found in the user's documents.";
        return hits
          .map((h, i) => `(${i + 1}) ${h.filename} (file ${h.fileId}${h.page ? `, page ${h.page}` : ''}, part ${Math.floor(h.seq / CHUNKS_PER_PART) + 1}):\n${h.content.slice(0, HIT_CHARS)}`)
          .join('\n\n');
      },
    },
  ];
}

async function readable(deps: AppDeps, fileId: string, userId: string): Promise<FileRow | undefined> {
  try {
    return await readableFile(deps, fileId, userId);
  } catch (err) {
    if (err instanceof AppError) return undefined;
    throw err;
  }
}


/** One part of a document's text: its chunks without the overlap they share, at most READ_FILE_CHARS. */
async function readPart(deps: AppDeps, file: FileRow, part: number): Promise<{ content: string; more: boolean } | { error: string }> {
  if (file.kind !== 'document') return { error: `${file.filename} is an image, not a document: it is shown with the message it came with.` };
  if (file.textStatus === 'pending') {
    // Just uploaded: its text may be a moment away.
    await Promise.race([deps.fileText.idle(), Bun.sleep(PENDING_WAIT_MS)]);
    file = (await readable(deps, file.id, file.userId)) ?? file;
  }
  if (file.textStatus === 'pending') return { error: `${file.filename} is still being read; try again in a moment.` };
  if (file.textStatus === 'failed') return { error: `${file.filename} could not be read: ${file.textError ?? 'unknown reason'}` };
  const per = CHUNKS_PER_PART;
  const chunks = await deps.store.read((tx) => readChunks(tx, file.id, (part - 1) * per, per + 1));
  if (!chunks.length) return part === 1 ? { content: '(The document has no text.)', more: false } : { error: `${file.filename} has no part ${part}.` };
  const mine = chunks.slice(0, per);
  const text = mine.map((c, i) => (i === 0 ? c.content : c.content.slice(Math.min(CHUNK_OVERLAP, c.content.length)))).join(' ');
  return { content: text.slice(0, READ_FILE_CHARS), more: chunks.length > per };
}
