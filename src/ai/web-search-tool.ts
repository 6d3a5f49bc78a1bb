import { newId } from '../ids';
import { AiError, type AiEvent, type AiTool, type StreamChatOptions, type WebSearchResult } from './ai.types';
import type { SearchProvider } from './search';
import type { ToolSource } from '../tools/tool.types';

/**
 * `web_search`, to the registry (src/tools/): chat turns and group answers, through the search
 * connection (docs/chat.md, "Web search in chat"). Not on openai-responses, where searching is
 * OpenAI's own hosted tool (the provider's `webSearch`: group answers and research only, since in
 * chat it would be OpenAI's paid search on every turn, which nobody configured). Research turns
 * search in their own loop (research-loop.ts).
 */
export const webSearchToolSource: ToolSource = {
  id: 'web_search',
  label: 'Web search',
  priority: 80,
  kinds: ['chat', 'group'],
  async status(deps) {
    return (await deps.connections.search()) ? {} : { unavailable: 'No search connection is enabled: add one of kind search under Connections (docs/connections.md).' };
  },
  async tools(turn) {
    if (turn.provider === 'openai-responses') return [];
    const search = await turn.deps.connections.search();
    return search ? [{ ...webSearchTool(search, turn.warn), label: 'Web search' }] : [];
  },
};

/** The `web_search` function offered to chat-completions models when a search provider is set. */
export function webSearchTool(search: SearchProvider, warn?: StreamChatOptions['warn']): AiTool {
  return {
    name: 'web_search',
    description: 'Search the web. Returns titles, links and snippets of the best results.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'What to search for' } }, required: ['query'] },
    async run(args, emit) {
      const query = typeof args.query === 'string' && args.query.trim() ? args.query.trim() : '';
      if (!query) return 'No query given.';
      emit({ type: 'web_search.in_progress', itemId: newId(), query, numResults: 5 });
      const { results, failure } = await searchWeb(search, query, { count: 5 }, emit, warn);
      if (failure) return `${failure} No results.`;
      return results.map((r, i) => `[${i + 1}] ${r.title} (${r.link})\n${r.snippet}`).join('\n\n') || 'No results.';
    },
  };
}

/** How a failed search shows in a stream; `searchFailureOf` reads it back (the group assistant). */
const FAILED_PREFIX = 'The web search failed: ';

/**
 * One search, and its `web_search.completed`. A failure (SearxNG down, answering 5xx) does not end
 * the turn, but must not pass for "no results": the stream's union has no failed search, so a
 * short reasoning note says so just before the empty `web_search.completed` (docs/research.md),
 * and the log gets the details (`warn`, with the request id).
 */
export async function searchWeb(
  search: SearchProvider,
  query: string,
  opts: { count: number; signal?: AbortSignal },
  emit: (e: AiEvent) => void,
  warn?: StreamChatOptions['warn'],
): Promise<{ results: WebSearchResult[]; failure?: string }> {
  try {
    const results = await search.search(query, opts);
    emit({ type: 'web_search.completed', results });
    return { results };
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    const failure = err instanceof AiError ? err.message : 'The search provider failed.';
    warn?.('web search failed', { provider: search.name, query, cause: err instanceof AiError ? (err.detail ?? err.message) : String(err) });
    emit({ type: 'reasoning_text.delta', delta: FAILED_PREFIX + failure });
    emit({ type: 'reasoning_text.done' });
    emit({ type: 'web_search.completed', results: [] });
    return { results: [], failure };
  }
}

/** The failure a reasoning note of `searchWeb` reports, or undefined for any other reasoning. */
export const searchFailureOf = (reasoning: string): string | undefined =>
  reasoning.startsWith(FAILED_PREFIX) ? reasoning.slice(FAILED_PREFIX.length) : undefined;
