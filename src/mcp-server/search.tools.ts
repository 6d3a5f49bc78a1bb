import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/server';
import type { AppDeps } from '../deps';
import { searchDocuments } from '../files/embeddings-search';
import { searchHistory } from '../chat/history.store';
import { answer, refusingAppErrors, type McpCaller } from './mcp-tool';

/** Characters of a hit handed back: a chunk is about 2,000; the excerpt is what files/searchFiles answers. */
const EXCERPT_CHARS = 500;

/**
 * Search over what the user keeps in Parley: the text of their documents (files/searchFiles) and
 * their own earlier conversations (the assistant's search_history). Both read only the caller's
 * own, as the operations do.
 */
export function registerSearchTools(server: McpServer, deps: AppDeps, caller: McpCaller) {
  server.registerTool(
    'search_files',
    {
      title: 'Search my documents',
      description:
        "Search the text of the user's documents uploaded to Parley (PDF, Word, Markdown, text…), best first. Each hit is an excerpt with its file and page. " +
        '`mode`: `text` (any of the words), `semantic` (by meaning; only when the server has embeddings set up) or `hybrid` (both; the default when it has).',
      inputSchema: z.object({
        query: z.string().min(1).max(500).describe('Words or a question to look for.'),
        limit: z.number().int().min(1).max(50).optional().describe('How many hits at most (default 10).'),
        mode: z.enum(['text', 'semantic', 'hybrid']).optional(),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ query, limit, mode }) =>
      refusingAppErrors(async () => {
        const found = await searchDocuments(deps, { userId: caller.user.id, query, limit: limit ?? 10, mode });
        const hits = found.hits.map((h) => ({ fileId: h.fileId, filename: h.filename, page: h.page, excerpt: h.content.slice(0, EXCERPT_CHARS) }));
        const text = hits.length
          ? hits.map((h, i) => `(${i + 1}) ${h.filename}${h.page != null ? `, page ${h.page}` : ''} [file ${h.fileId}]\n${h.excerpt}`).join('\n\n')
          : 'No document matched.';
        return answer(text, { mode: found.mode, hits });
      }),
  );

  server.registerTool(
    'search_history',
    {
      title: 'Search my conversations',
      description: "Search the user's own earlier Parley conversations (not group chats) for something they said or were told, best first.",
      inputSchema: z.object({
        query: z.string().min(1).max(500).describe('Words to look for (any of them matches).'),
        limit: z.number().int().min(1).max(20).optional().describe('How many hits at most (default 5).'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ query, limit }) => {
      const found = await deps.store.read((tx) => searchHistory(tx, { userId: caller.user.id, query, limit: limit ?? 5 }));
      const hits = found.map((h) => ({ conversationId: h.conversationId, text: h.text.slice(0, EXCERPT_CHARS) }));
      const text = hits.length ? hits.map((h, i) => `(${i + 1}) [conversation ${h.conversationId}]\n${h.text}`).join('\n\n') : 'Nothing found in earlier conversations.';
      return answer(text, { hits });
    },
  );
}
