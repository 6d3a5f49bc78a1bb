import type { AiEvent, WebSearchResult } from './ai.types';

/**
 * Upstream Responses events → the interface's union. Stateful: it remembers web-search calls
 * (their sources come with `output_item.done`, titles with the answer's `url_citation`s) and the
 * function calls of the turn.
 */
export class ResponsesEventMapper {
  finished = false;
  failure: string | undefined;
  functionCalls: { callId: string; name: string; arguments: string }[] = [];
  private readonly searches = new Map<string, { query: string; started: boolean }>();
  private readonly unsourced: string[] = [];
  private readonly titles = new Map<string, string>();
  private reasoningOpen = false;

  constructor(private readonly model: string) {}

  /** `map`, with the hot case (an answer's text delta) taken without a generator. */
  mapInto(ev: any, out: AiEvent[]): void {
    if (ev.type === 'response.output_text.delta' && !this.reasoningOpen) out.push({ type: 'text.delta', delta: ev.delta ?? '' });
    else for (const e of this.map(ev)) out.push(e);
  }

  *map(ev: any): Generator<AiEvent> {
    switch (ev.type) {
      case 'response.output_item.added': {
        const item = ev.item ?? {};
        if (item.type === 'web_search_call') {
          this.searches.set(item.id, { query: item.action?.query ?? '', started: false });
        } else if (item.type === 'image_generation_call') {
          yield { type: 'image_generation.in_progress', itemId: item.id, ...imageOptions(item) };
        } else if (item.type === 'code_interpreter_call') {
          yield { type: 'code_interpreter.in_progress', itemId: item.id };
        }
        return;
      }
      case 'response.web_search_call.in_progress':
      case 'response.web_search_call.searching': {
        const s = this.searches.get(ev.item_id) ?? { query: '', started: false };
        this.searches.set(ev.item_id, s);
        if (!s.started) {
          s.started = true;
          yield { type: 'web_search.in_progress', itemId: ev.item_id, query: s.query };
        }
        return;
      }
      case 'response.content_part.added':
        if (ev.part?.type === 'output_text') {
          yield* this.closeReasoning();
          yield { type: 'content_part.added' };
        }
        return;
      case 'response.output_text.delta':
        yield* this.closeReasoning();
        yield { type: 'text.delta', delta: ev.delta ?? '' };
        return;
      case 'response.output_text.annotation.added': {
        const a = ev.annotation;
        if (a?.type === 'url_citation' && a.url) this.titles.set(a.url, a.title ?? '');
        return;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.reasoningOpen = true;
        yield { type: 'reasoning_text.delta', delta: ev.delta ?? '' };
        return;
      case 'response.reasoning_summary_text.done':
      case 'response.reasoning_text.done':
        yield* this.closeReasoning();
        return;
      case 'response.output_item.done': {
        const item = ev.item ?? {};
        if (item.type === 'web_search_call') yield* this.completeSearch(item);
        else if (item.type === 'image_generation_call' && item.result)
          yield { type: 'image_generation.completed', images: [{ type: 'base64', data: item.result }], model: this.model };
        else if (item.type === 'code_interpreter_call') yield { type: 'code_interpreter.completed', ...(item.id ? { itemId: item.id } : {}) };
        else if (item.type === 'function_call') this.functionCalls.push({ callId: item.call_id, name: item.name, arguments: item.arguments ?? '' });
        else if (item.type === 'message') yield* this.flushUnsourced();
        return;
      }
      case 'response.completed':
        yield* this.closeReasoning();
        yield* this.flushUnsourced();
        this.finished = true;
        return;
      case 'response.incomplete':
        this.failure = `The response stopped early (${ev.response?.incomplete_details?.reason ?? 'incomplete'}).`;
        return;
      case 'response.failed':
        this.failure = ev.response?.error?.message ?? 'The AI provider failed to complete the response.';
        return;
      case 'error':
        this.failure = ev.message ?? 'The AI provider reported an error.';
        return;
      default:
        return;
    }
  }

  private *closeReasoning(): Generator<AiEvent> {
    if (this.reasoningOpen) {
      this.reasoningOpen = false;
      yield { type: 'reasoning_text.done' };
    }
  }

  /** Calls that came without sources get their results from the answer's `url_citation`s. */
  private *flushUnsourced(): Generator<AiEvent> {
    for (const _ of this.unsourced.splice(0)) {
      const results = [...this.titles].map(([link, title]) => ({ link, title: title || hostOf(link), snippet: '' }));
      yield { type: 'web_search.completed', results };
    }
  }

  private *completeSearch(item: any): Generator<AiEvent> {
    const s = this.searches.get(item.id);
    const query = item.action?.query ?? item.action?.queries?.[0] ?? s?.query ?? '';
    if (!s?.started) yield { type: 'web_search.in_progress', itemId: item.id, query };
    const sources: { url: string }[] = item.action?.sources ?? [];
    if (!sources.length) {
      this.unsourced.push(item.id);
      return;
    }
    const results: WebSearchResult[] = sources.map((src) => ({ link: src.url, title: this.titles.get(src.url) || hostOf(src.url), snippet: '' }));
    yield { type: 'web_search.completed', results };
  }
}

const hostOf = (url: string) => {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
};

/** The image options the interface's enums allow (upstream may also say e.g. `auto`, which is left out). */
function imageOptions(item: any): { outputFormat?: 'png' | 'jpeg' | 'webp'; size?: '1024x1024' | '1024x1536' | '1536x1024' } {
  const out: { outputFormat?: 'png' | 'jpeg' | 'webp'; size?: '1024x1024' | '1024x1536' | '1536x1024' } = {};
  if (['png', 'jpeg', 'webp'].includes(item.output_format)) out.outputFormat = item.output_format;
  if (['1024x1024', '1024x1536', '1536x1024'].includes(item.size)) out.size = item.size;
  return out;
}
