import type { AiTool } from '../ai/ai.types';
import type { AppDeps } from '../deps';
import type { Config } from '../config';
import { createWidget } from '../widgets/widget.store';
import { searchHistory } from './history.store';
import { memoryTools } from '../memory/memory.tools';
import { fileTools } from '../files/file.tools';
import { imageTools } from '../files/image.tools';

/** Excerpt length of a history hit handed to the model and shown in `history.completed`. */
const HISTORY_TEXT_CHARS = 500;

/**
 * The function tools Parley offers the model during chat and research, on both providers:
 * `generate_canvas` stores a canvas widget, `search_history` searches the user's own past
 * conversations; with `memories` (the user's `enableMemories`), the memory tools (src/memory/).
 */
export function chatTools(
  deps: AppDeps,
  ctx: { userId: string; conversationId: string; responseId: string; memories?: boolean; files?: boolean; images?: Config },
): AiTool[] {
  return [
    ...(ctx.memories ? memoryTools(deps, ctx) : []),
    // With documents to read (the user's, or attached here): read_file, search_files (src/files/file.tools.ts).
    ...(ctx.files ? fileTools(deps, ctx) : []),
    // With an images connection: generate_image, edit_image (src/files/image.tools.ts).
    ...imageTools(deps, ctx),
    {
      name: 'generate_canvas',
      description: 'Create a canvas: a standalone document (report, plan, code, essay) the user can open and edit beside the chat.',
      parameters: {
        type: 'object',
        properties: {
          topic: { type: 'string', description: 'Subject of the document, used as its title' },
          goal: { type: 'string', description: 'What the document is for (optional)' },
          content: { type: 'string', description: 'The document in Markdown' },
        },
        required: ['topic', 'content'],
      },
      async run(args, emit, callId, callKey) {
        const topic = typeof args.topic === 'string' && args.topic.trim() ? args.topic.trim() : 'Canvas';
        const goal = typeof args.goal === 'string' ? args.goal : undefined;
        const content = typeof args.content === 'string' ? args.content : '';
        emit({ type: 'generate_canvas.in_progress', itemId: callId, topic, ...(goal ? { goal } : {}) });
        const widget = await deps.store.read((tx) =>
          createWidget(
            tx,
            {
            conversationId: ctx.conversationId,
            responseId: ctx.responseId,
            widgetType: 'canvas',
            title: topic,
            document: { topic, goal: goal ?? null, content },
            // Committed before this call's events and output are (a moment later): a restart in
            // between runs the call again, and must find this canvas, not make a second one.
            origin: `${ctx.responseId}:${callKey}`,
            },
            deps.now(),
          ),
        );
        emit({ type: 'widget.created', widgetId: widget.id, widgetType: 'canvas', responseId: ctx.responseId });
        return `Canvas "${topic}" created (widget ${widget.id}).`;
      },
    },
    {
      name: 'search_history',
      description: "Search the user's own earlier conversations for something they said or were told.",
      parameters: { type: 'object', properties: { query: { type: 'string', description: 'Words to look for' } }, required: ['query'] },
      async run(args, emit, callId) {
        const query = typeof args.query === 'string' ? args.query : '';
        emit({ type: 'history.in_progress', itemId: callId, query });
        const hits = await deps.store.read((tx) => searchHistory(tx, { userId: ctx.userId, query, excludeConversationId: ctx.conversationId }));
        const results = hits.map((h) => ({ text: h.text.slice(0, HISTORY_TEXT_CHARS) }));
        emit({ type: 'history.completed', results });
        return results.length ? results.map((r, i) => `(${i + 1}) ${r.text}`).join('\n\n') : 'Nothing found in earlier conversations.';
      },
    },
  ];
}
