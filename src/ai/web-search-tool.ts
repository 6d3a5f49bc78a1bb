import { newId } from '../ids';
import type { AiTool } from './ai.types';
import type { SearchProvider } from './search';

/** The `web_search` function offered to chat-completions models when a search provider is set. */
export function webSearchTool(search: SearchProvider): AiTool {
  return {
    name: 'web_search',
    description: 'Search the web. Returns titles, links and snippets of the best results.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'What to search for' } }, required: ['query'] },
    async run(args, emit) {
      const query = typeof args.query === 'string' && args.query.trim() ? args.query.trim() : '';
      if (!query) return 'No query given.';
      emit({ type: 'web_search.in_progress', itemId: newId(), query, numResults: 5 });
      const results = await search.search(query, { count: 5 }).catch(() => []);
      emit({ type: 'web_search.completed', results });
      return results.map((r, i) => `[${i + 1}] ${r.title} (${r.link})\n${r.snippet}`).join('\n\n') || 'No results.';
    },
  };
}
