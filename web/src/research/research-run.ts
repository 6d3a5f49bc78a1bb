import { post } from '../shared/api';
import { followResponse } from '../shared/follow-response';
import { approvalsAfter, type PendingApproval } from '../chat/answer-parts';

export interface Source {
  link: string;
  title: string;
  host: string;
}

/**
 * A link anyone could have put on the web, as a source: http(s) only (a `javascript:` link must
 * never be clickable) and one the browser can parse (a result like `http://exa mple.com/` would
 * otherwise break the page that shows it); undefined for anything else.
 */
function sourceOf(link: unknown, title: unknown): Source | undefined {
  if (typeof link !== 'string' || !/^https?:\/\//i.test(link) || !URL.canParse(link)) return undefined;
  const host = new URL(link).host;
  return { link, host, title: typeof title === 'string' && title.trim() ? title.trim() : host };
}
export interface Search {
  query: string;
  /** Absent while the search runs. */
  found?: number;
}

/** What the page shows of a research run, rebuilt from its events (or from the stored answer). */
/** A page the research read, numbered as the report cites it (`[n]`). */
export interface ReadPage extends Source {
  n: number;
}

export interface Run {
  question: string;
  searches: Search[];
  /** Every link the searches found. */
  sources: Source[];
  /** The pages read for the report (`web_page.read`), in citation order; empty from a provider that does not say. */
  read: ReadPage[];
  reasoning: string;
  report: string;
  /** Calls of "ask first" tools the run waits on (docs/chat.md, "Tool approval"), as on the chat page. */
  approvals: PendingApproval[];
  state: 'waiting' | 'running' | 'done' | 'failed' | 'stopped';
  error?: string;
  responseId?: string;
}

export const emptyRun = (question: string): Run => ({ question, searches: [], sources: [], read: [], reasoning: '', report: '', approvals: [], state: 'waiting' });

/** A `web_page.read` event (live or stored) into the run's read pages: http(s) links only, each number once. */
export function addReadPage(read: ReadPage[], data: Record<string, unknown>): ReadPage[] {
  const n = Number(data.n);
  const source = sourceOf(data.url, data.title);
  if (!Number.isInteger(n) || !source || read.some((p) => p.n === n)) return read;
  return [...read, { n, ...source }].sort((a, b) => a.n - b.n);
}
export const isRunning = (run: Run | undefined) => run?.state === 'waiting' || run?.state === 'running';

const CANCELLED = 'The response was cancelled.';

/**
 * Search results are links anyone can put on the web: only http(s) ones become sources (a
 * `javascript:` link must never be clickable), each once.
 */
export function addSources(sources: Source[], results: unknown): Source[] {
  if (!Array.isArray(results)) return sources;
  const out = [...sources];
  for (const r of results as { link?: unknown; title?: unknown }[]) {
    const source = sourceOf(r?.link, r?.title);
    if (source && !out.some((s) => s.link === source.link)) out.push(source);
  }
  return out;
}

/** One event into the run; false when it ends the run. */
function apply(run: Run, data: { type: string; [field: string]: unknown }): boolean {
  switch (data.type) {
    case 'response.created':
      run.responseId = String(data.responseId);
      run.state = 'running';
      break;
    case 'web_search.in_progress':
      run.searches = [...run.searches, { query: String(data.query ?? '') }];
      break;
    case 'web_search.completed': {
      const results = Array.isArray(data.results) ? data.results : [];
      // The open search (the last without a count) is the one that completed.
      let i = run.searches.length - 1;
      while (i >= 0 && run.searches[i]!.found !== undefined) i--;
      if (i >= 0) run.searches = run.searches.map((s, j) => (j === i ? { ...s, found: results.length } : s));
      run.sources = addSources(run.sources, results);
      break;
    }
    case 'web_page.read':
      run.read = addReadPage(run.read, data);
      break;
    case 'reasoning_text.delta':
      run.reasoning += String(data.delta ?? '');
      break;
    case 'reasoning_text.done':
      if (run.reasoning && !run.reasoning.endsWith('\n\n')) run.reasoning += '\n\n';
      break;
    case 'text.delta':
      run.report += String(data.delta ?? '');
      break;
    case 'tool_call.approval_required':
    case 'tool_call.approval_resolved':
      run.approvals = approvalsAfter(run.approvals, data);
      break;
    case 'done':
      run.state = 'done';
      run.approvals = [];
      return false;
    case 'error':
      // An ended run waits on nobody.
      run.approvals = [];
      if (data.message === CANCELLED) run.state = 'stopped';
      else Object.assign(run, { state: 'failed', error: String(data.message ?? 'The research failed.') });
      return false;
  }
  return true;
}

export interface RunHooks {
  onConversation?(conversationId: string): void;
  onRun(run: Run): void;
}

/** Start a research run and follow it to its end; `files`: uploaded documents and images it reads and cites. */
export function startResearch(question: string, hooks: RunHooks, signal: AbortSignal, files: string[] = []): Promise<void> {
  return follow(() => post('chat/streamDeepResearch', { message: question, ...(files.length ? { files } : {}) }, { signal }), emptyRun(question), hooks, signal);
}

/** Follow a run that is already going (another tab started it, or this one before a reload), from its first event. */
export function followResearch(question: string, responseId: string, hooks: RunHooks, signal: AbortSignal): Promise<void> {
  const run = { ...emptyRun(question), responseId, state: 'running' as const };
  return follow(() => post('chat/resumeStream', { responseId, after: 0 }, { signal }), run, hooks, signal);
}

/** Read the run's stream to its `done` or `error`, resumed after a cut (follow-response.ts). */
function follow(open: () => Promise<Response>, run: Run, hooks: RunHooks, signal: AbortSignal): Promise<void> {
  const show = () => hooks.onRun({ ...run });
  show();
  return followResponse(
    open,
    {
      responseId: () => run.responseId,
      onFailure: (message) => (Object.assign(run, { state: 'failed', error: message }), show()),
      lostBeforeStart: 'The connection was lost before the research started. Start it again.',
      onEvent(data) {
        if (data.type === 'conversation.created') hooks.onConversation?.(String(data.conversationId));
        const goesOn = apply(run, data);
        show();
        return goesOn;
      },
    },
    signal,
  );
}
