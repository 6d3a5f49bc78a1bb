import type { WebSearchResult } from './ai.types';
import { AiError } from './ai.types';
import { keyedFetch, refusedRedirectMessage, refusedRedirectOf } from '../net/keyed-fetch';

export interface SearchProvider {
  readonly name: string;
  search(query: string, opts?: { count?: number; signal?: AbortSignal }): Promise<WebSearchResult[]>;
}

/**
 * SearxNG's JSON API (`GET /search?q=…&format=json`; the instance must list `json` under
 * `search.formats`). Results map `url → link`, `title → title`, `content → snippet`.
 */
export function createSearxngSearch(baseUrl: string, timeoutMs = 10_000): SearchProvider {
  const root = baseUrl.replace(/\/+$/, '');
  return {
    name: 'searxng',
    async search(query, opts = {}) {
      const url = `${root}/search?${new URLSearchParams({ q: query, format: 'json' })}`;
      const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      let res: Response;
      try {
        res = await keyedFetch()(url, { signal, headers: { accept: 'application/json' } });
      } catch (err) {
        if (refusedRedirectOf(err)) throw new AiError(refusedRedirectMessage('The search provider', 'PARLEY_SEARXNG_URL'), (err as Error).message);
        throw new AiError('The search provider could not be reached.', err instanceof Error ? err.message : String(err));
      }
      if (!res.ok) throw new AiError('The search provider answered with an error.', `HTTP ${res.status}: ${(await res.text().catch(() => '')).slice(0, 500)}`);
      const body = (await res.json().catch(() => ({}))) as { results?: { url?: string; title?: string; content?: string }[] };
      return (body.results ?? [])
        .filter((r) => typeof r.url === 'string' && /^https?:\/\//.test(r.url))
        .slice(0, opts.count ?? 8)
        .map((r) => ({ link: r.url!, title: String(r.title ?? r.url), snippet: String(r.content ?? '') }));
    },
  };
}
