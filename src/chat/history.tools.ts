import type { ToolSource } from '../tools/tool.types';
import { searchHistory } from './history.store';

/** Excerpt length of a history hit handed to the model and shown in `history.completed`. */
const HISTORY_TEXT_CHARS = 500;

/** `search_history`, to the registry (src/tools/): the user's own earlier conversations (docs/research.md, "Tools"). */
export const historyToolSource: ToolSource = {
  id: 'history',
  label: 'Conversation history',
  priority: 60,
  async tools({ deps, user, conversationId }) {
    return [
      {
        name: 'search_history',
        label: 'History search',
        description: "Search the user's own earlier conversations for something they said or were told.",
        parameters: { type: 'object', properties: { query: { type: 'string', description: 'Words to look for' } }, required: ['query'] },
        async run(args, emit, callId) {
          const query = typeof args.query === 'string' ? args.query : '';
          emit({ type: 'history.in_progress', itemId: callId, query });
          const hits = await deps.store.read((tx) => searchHistory(tx, { userId: user.id, query, excludeConversationId: conversationId }));
          const results = hits.map((h) => ({ text: h.text.slice(0, HISTORY_TEXT_CHARS) }));
          emit({ type: 'history.completed', results });
          return results.length ? results.map((r, i) => `(${i + 1}) ${r.text}`).join('\n\n') : 'Nothing found in earlier conversations.';
        },
      },
    ];
  },
};
