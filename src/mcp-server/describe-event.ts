type Event = { type: string; [k: string]: unknown };

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * One line for a progress notification, for the events a person following a research run cares
 * about (docs/research.md lists them all); undefined for the rest: text deltas would be a
 * notification per token, and the report comes whole at the end.
 */
export function describeEvent(e: Event): string | undefined {
  switch (e.type) {
    case 'response.created':
      return `Research started${e.model ? ` with ${str(e.model)}` : ''}.`;
    case 'web_search.in_progress':
      return `Searching the web: ${str(e.query)}`;
    case 'web_search.completed':
      return `Search found ${Array.isArray(e.results) ? e.results.length : 0} results.`;
    case 'web_page.read':
      return e.read ? `Read ${str(e.title) || str(e.url)} (${str(e.url)})` : `Could not read ${str(e.url)}`;
    case 'read_file.in_progress':
      return `Reading your document ${str(e.filename) || str(e.fileId)}`;
    case 'reasoning_text.done':
      return 'Thought it over.';
    case 'content_part.added':
      return 'Writing the report…';
    case 'done':
      return 'Research finished.';
    case 'error':
      return `Research ended: ${str(e.message)}`;
    default:
      return undefined;
  }
}
