import { newId } from '../ids';
import type { AiEvent, AiMessage, StreamChatOptions } from './ai.types';
import type { ChatClient } from './openai-chat';
import { readPage, type ReadPageOptions } from './read-page';
import type { SearchProvider } from './search';
import { stripThink } from './think-splitter';
import { searchWeb } from './web-search-tool';

export interface ResearchSettings {
  /** Queries per round, and pages read per round. */
  breadth: number;
  /** Rounds of plan → search → read. */
  depth: number;
  page: ReadPageOptions;
}

interface Source {
  n: number;
  url: string;
  title: string;
  excerpt: string;
}

const EXCERPT_CHARS = 4000;

/**
 * Deep research for chat-completions servers, which have no research tools of their own:
 * plan queries → search (web_search.* events) → read the best pages → maybe plan follow-ups →
 * stream a cited report. Small local models often answer off-format; every step has a fallback
 * (the question itself as the query, no follow-ups) so the run still ends with a report.
 */
export async function* runResearch(
  chat: ChatClient,
  opts: StreamChatOptions & { model: string },
  search: SearchProvider | undefined,
  settings: ResearchSettings,
): AsyncGenerator<AiEvent> {
  const question = [...opts.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const sources: Source[] = [];
  const searched = new Set<string>();
  if (search) {
    for (let round = 0; round < settings.depth; round++) {
      opts.signal?.throwIfAborted();
      const planned = yield* planQueries(chat, opts, question, sources, settings.breadth, round);
      const queries = planned.filter((q) => !searched.has(q.toLowerCase())).slice(0, settings.breadth);
      if (!queries.length) break;
      const found: { link: string; title: string; snippet: string }[][] = [];
      for (const query of queries) {
        searched.add(query.toLowerCase());
        const numResults = settings.breadth * 2;
        yield { type: 'web_search.in_progress', itemId: newId(), query, numResults };
        const events: AiEvent[] = [];
        const { results } = await searchWeb(search, query, { count: numResults, signal: opts.signal }, (e) => events.push(e), opts.warn);
        yield* events;
        found.push(results);
      }
      // Best pages: the top result of each query first, then the second ones, …
      const picks: { link: string; title: string; snippet: string }[] = [];
      for (let rank = 0; picks.length < settings.breadth && found.some((r) => r.length > rank); rank++)
        for (const results of found) {
          const r = results[rank];
          if (r && picks.length < settings.breadth && !picks.some((p) => p.link === r.link) && !sources.some((s) => s.url === r.link)) picks.push(r);
        }
      // With the turn's signal: a cancel must not wait for a slow page (up to its 10 s timeout).
      const pages = await Promise.all(picks.map((p) => readPage(p.link, settings.page, opts.signal)));
      opts.signal?.throwIfAborted();
      for (const [i, p] of picks.entries()) {
        const page = pages[i];
        const source = { n: sources.length + 1, url: p.link, title: page?.title || p.title, excerpt: (page?.text || p.snippet).slice(0, EXCERPT_CHARS) };
        sources.push(source);
        // Which pages the report's [n] point at: the searches found more than were read.
        yield { type: 'web_page.read', itemId: newId(), n: source.n, url: source.url, title: source.title, read: !!page?.text };
      }
    }
  }
  opts.signal?.throwIfAborted();
  await fitExcerpts(chat, opts, sources, !!search);
  yield* chat.stream({ model: opts.model, messages: reportMessages(opts.messages, sources, !!search), tools: opts.tools, signal: opts.signal, onUsage: opts.onUsage, sampling: opts.sampling });
}

/** Of the room beside the question and the instructions, what the page extracts may take; the rest is for tools and history. */
const EXCERPT_SHARE = 0.75;

/**
 * The context budget for the report: page extracts shortened, each to an equal share of the room
 * the model's context has beside the system prompt, the question and the sources' titles, so the
 * report request fits (the budget then keeps what history and tools it can, fit-context.ts).
 */
async function fitExcerpts(chat: ChatClient, opts: StreamChatOptions & { model: string }, sources: Source[], searched: boolean): Promise<void> {
  if (!sources.length) return;
  const question = opts.messages.findLast((m) => m.role === 'user');
  const bare = sources.map((s) => ({ ...s, excerpt: '' }));
  const spare = await chat.spare({ model: opts.model, messages: reportMessages([...opts.messages.filter((m) => m.role === 'system'), ...(question ? [question] : [])], bare, searched) });
  if (!spare) return;
  const share = Math.max(0, Math.floor((spare.tokens * EXCERPT_SHARE) / sources.length));
  for (const s of sources) {
    const tokens = await spare.countText(s.excerpt);
    // Characters in proportion, a little under: tokens follow characters only roughly.
    if (tokens > share) s.excerpt = s.excerpt.slice(0, Math.floor((s.excerpt.length * share * 0.95) / tokens));
  }
}

async function* planQueries(
  chat: ChatClient,
  opts: StreamChatOptions & { model: string },
  question: string,
  sources: Source[],
  breadth: number,
  round: number,
): AsyncGenerator<AiEvent, string[]> {
  const learned = sources.map((s) => `- ${s.title}: ${s.excerpt.slice(0, 300).replace(/\s+/g, ' ')}`).join('\n');
  const prompt =
    round === 0
      ? `Plan web research for this question:\n\n${question}\n\nReply with only a JSON array of at most ${breadth} short web search queries.`
      : `Question:\n${question}\n\nWhat was found so far:\n${learned}\n\nIf more searching would help, reply with only a JSON array of at most ${breadth} new search queries; otherwise reply [].`;
  let answer = { text: '', reasoning: '' };
  try {
    answer = await chat.complete({ model: opts.model, messages: [{ role: 'user', content: prompt }], signal: opts.signal, onUsage: opts.onUsage });
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    // A planner failure is not a research failure: search the question itself.
  }
  const thought = answer.reasoning || answer.text.match(/<think>([\s\S]*?)(<\/think>|$)/)?.[1]?.trim() || '';
  if (thought) {
    yield { type: 'reasoning_text.delta', delta: thought };
    yield { type: 'reasoning_text.done' };
  }
  const queries = parseQueries(stripThink(answer.text), breadth);
  // `[]` ends the research in later rounds ("no more searching"); in the first it is nothing usable.
  if (!queries?.length) return round === 0 ? [question.slice(0, 200)] : [];
  return queries;
}

/** A JSON array of strings, or failing that the answer's lines; `undefined` when nothing usable. */
export function parseQueries(text: string, max: number): string[] | undefined {
  const json = text.match(/\[[\s\S]*\]/)?.[0];
  if (json) {
    try {
      const arr = JSON.parse(json);
      if (Array.isArray(arr)) {
        const qs = arr.map((q) => (typeof q === 'string' ? q : typeof q?.query === 'string' ? q.query : '')).map((q) => q.trim()).filter(Boolean);
        return qs.slice(0, max);
      }
    } catch {
      // fall through to lines
    }
  }
  const lines = text
    .split('\n')
    .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').replace(/^["']|["']$/g, '').trim())
    .filter((l) => l.length > 2 && l.length < 200);
  return lines.length ? lines.slice(0, max) : undefined;
}

function reportMessages(messages: AiMessage[], sources: Source[], searched: boolean): AiMessage[] {
  const sourceText = sources.map((s) => `[${s.n}] ${s.title} — ${s.url}\n${s.excerpt}`).join('\n\n');
  const instructions = sources.length
    ? `You are writing a research report. Use the numbered sources below, cite them inline as [n], and end with a "Sources" list of the cited [n] title — URL.\n\nSources:\n\n${sourceText}`
    : searched
      ? 'You are writing a research report. The web search found nothing usable; answer from your own knowledge and say so.'
      : 'You are writing a research report. No web search is configured on this server; answer from your own knowledge and say so.';
  // After the conversation's own system prompt: the request shaper merges every system text into
  // one leading message, in order (shape-chat-messages.ts).
  return [...messages.filter((m) => m.role === 'system'), { role: 'system', content: instructions }, ...messages.filter((m) => m.role !== 'system')];
}
