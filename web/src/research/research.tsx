import './research.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, type Item } from '../shared/api';
import { renderMarkdown } from '../shared/markdown';
import { adoptAddress, onLinkClick } from '../shared/router';
import { ResearchList } from './research-list';
import { addReadPage, addSources, emptyRun, followResearch, isRunning, startResearch, type Run, type Source } from './research-run';
import { notifyEnded, useNotifyPermission } from './research-notify';
import { AttachFileButton, AttachmentList, DropZone, useAttachments } from '../files/attachments';
import { ToolApprovals } from '../chat/tool-approval';

interface StoredItem extends Item {
  parts: { type?: string; results?: unknown }[];
}
interface LastResponse {
  id: string;
  kind: 'chat' | 'research';
  status: string;
}

const ENDED: Record<string, Run['state']> = { completed: 'done', failed: 'failed', cancelled: 'stopped' };

/**
 * The run as the conversation stores it once it ended: the last question, the report after it
 * and the sources its searches found (the assistant item's `web_search.completed` parts).
 */
function storedRun(items: StoredItem[], last: LastResponse | null): Run {
  let q = items.length - 1;
  while (q >= 0 && items[q]!.role !== 'user') q--;
  const run = emptyRun(q >= 0 ? items[q]!.content : '');
  const answer = items.slice(q + 1).find((i) => i.role === 'assistant');
  run.report = answer?.content ?? '';
  for (const part of answer?.parts ?? []) {
    if (part.type === 'web_search.completed') run.sources = addSources(run.sources, part.results);
    else if (part.type === 'web_page.read') run.read = addReadPage(run.read, part as Record<string, unknown>);
  }
  run.state = (last && ENDED[last.status]) || 'done';
  if (run.state === 'failed') run.error = run.report ? 'The research stopped before the report was finished.' : 'The research failed before writing a report.';
  return { ...run, responseId: last?.id };
}

/**
 * An ended run shown whole: its stored events, while they are kept (docs/research.md: 7 days by
 * default), give back the searches and the reasoning; after that, the stored answer alone.
 */
async function replayEnded(stored: Run, responseId: string, signal: AbortSignal): Promise<Run> {
  let replayed: Run | undefined;
  await followResearch(stored.question, responseId, { onRun: (r) => (replayed = r) }, signal).catch(() => undefined);
  if (!replayed || replayed.state === 'running' || (!replayed.report && !replayed.searches.length)) return stored;
  return { ...replayed, sources: addSources(replayed.sources, stored.sources), read: replayed.read.length ? replayed.read : stored.read };
}

/** Deep research: start one, follow it live (also after the tab was closed), read the report and its sources. */
/** `onActivity`: a run was started (the conversation list shows it). */
export function Research({ id, onActivity }: { id?: string; onActivity?(): void }) {
  const [run, setRun] = useState<Run>();
  const [error, setError] = useState<string>();
  const notify = useNotifyPermission();
  // Read when the run ends, which the closure that follows it cannot see change.
  const asked = useRef(false);
  asked.current = notify.asked;
  // One per view: leaving the page stops following (the run itself goes on on the server).
  const following = useRef(new AbortController());
  useEffect(() => () => following.current.abort(), []);
  // The conversation this view made by starting a run: it is already on screen.
  const created = useRef<string | undefined>(undefined);

  const followed = (promise: Promise<void>, last: () => Run | undefined) =>
    promise
      .then(() => {
        const ended = last();
        if (following.current.signal.aborted || !ended) return;
        if (ended.state === 'done') notifyEnded('Research finished', ended.question, asked.current);
        else if (ended.state === 'failed') notifyEnded('Research failed', ended.question, asked.current);
      })
      .catch(() => setError('The research could not be followed. Reload the page to try again.'));

  useEffect(() => {
    if (!id || id === created.current) return;
    const signal = following.current.signal;
    call<{ conversation: { lastResponse?: LastResponse | null }; items: StoredItem[] }>('chat/getConversation', { conversationId: id })
      .then(({ conversation, items }) => {
        if (signal.aborted) return;
        const last = conversation.lastResponse ?? null;
        const stored = storedRun(items, last);
        if (!last) return setRun(stored);
        if (ENDED[last.status]) return replayEnded(stored, last.id, signal).then((r) => !signal.aborted && setRun(r));
        // Still running: follow it from its first event, which rebuilds the searches and the report whole.
        let latest: Run | undefined;
        return followed(
          followResearch(stored.question, last.id, { onRun: (r) => setRun((latest = r)) }, signal),
          () => latest,
        );
      })
      .catch((err) => setError(err instanceof ApiError && err.status < 500 ? 'This research does not exist, or you may not read it.' : `The research could not be loaded: ${err.message}`));
  }, [id]);

  const start = (question: string, files: string[]) => {
    setError(undefined);
    let latest: Run | undefined;
    const hooks = {
      onConversation: (made: string) => {
        created.current = made;
        adoptAddress(`/research/${made}`);
        onActivity?.();
      },
      onRun: (r: Run) => setRun((latest = r)),
    };
    followed(startResearch(question, hooks, following.current.signal, files), () => latest);
  };

  const stop = async () => {
    if (!run?.responseId) return;
    try {
      await call('chat/cancelResponse', { responseId: run.responseId });
    } catch (err) {
      setError(`The research could not be stopped: ${(err as Error).message}`);
    }
  };

  return (
    <section class="page research" aria-labelledby="research-title">
      <div class="research-head">
        <h2 id="research-title">Research</h2>
        {(id || run) && (
          <a class="button" href="/research" onClick={onLinkClick('/research')}>
            New research
          </a>
        )}
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!id && !run && (
        <>
          <StartForm onStart={start} />
          <ResearchList />
        </>
      )}
      {id && !run && !error && <p class="hint">Loading…</p>}
      {run && <RunView run={run} notify={notify} onStop={stop} />}
    </section>
  );
}

/** The question, and documents for the research to read and cite beside the web (chosen or dropped). */
function StartForm({ onStart }: { onStart(question: string, files: string[]): void }) {
  const [text, setText] = useState('');
  const attachments = useAttachments();
  const submit = (e?: Event) => {
    e?.preventDefault();
    const question = text.trim();
    if (question && !attachments.uploading) onStart(question, attachments.ids());
  };
  return (
    <DropZone label="Drop documents for the research to read" onFiles={(files) => void attachments.add(files)}>
    <form class="research-start" onSubmit={submit}>
      <label for="research-question">Research question</label>
      <p id="research-question-hint" class="hint">
        Parley searches the web, reads what it finds and writes a report with its sources; attach documents for it to read and cite too. It keeps going if you close the page.
      </p>
      <textarea
        id="research-question"
        rows={3}
        value={text}
        aria-describedby="research-question-hint"
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
        }}
      />
      <AttachmentList attachments={attachments} />
      <div class="research-start-buttons">
        <AttachFileButton id="research-file" onFiles={(files) => void attachments.add(files)} />
        <button type="submit" disabled={!text.trim() || attachments.uploading}>
          Start research
        </button>
      </div>
    </form>
    </DropZone>
  );
}

function statusWords(run: Run): string {
  if (run.state === 'waiting') return 'Starting…';
  if (run.state === 'running' && run.approvals.length) return 'Waiting for your answer…';
  if (run.state === 'running') return run.report ? 'Writing the report…' : run.searches.length ? 'Searching the web and reading sources…' : 'Planning the research…';
  if (run.state === 'done') return 'Finished.';
  if (run.state === 'stopped') return 'Stopped.';
  return 'Failed.';
}

function RunView({ run, notify, onStop }: { run: Run; notify: ReturnType<typeof useNotifyPermission>; onStop(): void }) {
  const busy = isRunning(run);
  return (
    <article class="research-run" aria-labelledby="research-question-title">
      <h3 id="research-question-title" class="research-question">
        {run.question || 'Research'}
      </h3>
      <div class="research-controls">
        <p role="status" class="run-status">
          {statusWords(run)}
        </p>
        {busy && (
          <button type="button" onClick={onStop} disabled={!run.responseId}>
            Stop
          </button>
        )}
        {busy && <NotifyButton notify={notify} />}
      </div>
      {run.state === 'failed' && (
        <p role="alert" class="error">
          {run.error}
        </p>
      )}
      {run.responseId && run.approvals.length > 0 && <ToolApprovals responseId={run.responseId} approvals={run.approvals} />}
      {run.searches.length > 0 && (
        <section aria-labelledby="searches-title">
          <h4 id="searches-title">Searches</h4>
          <ol class="searches">
            {run.searches.map((s, i) => (
              <li key={i}>
                <span class="query">{s.query}</span>{' '}
                <span class="hint">{s.found === undefined ? '(searching…)' : `(${s.found} ${s.found === 1 ? 'result' : 'results'})`}</span>
              </li>
            ))}
          </ol>
        </section>
      )}
      {run.reasoning && (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <p class="plain">{run.reasoning.trim()}</p>
        </details>
      )}
      {(run.report || busy) && (
        <section aria-labelledby="report-title" aria-busy={busy ? 'true' : undefined}>
          <h4 id="report-title">Report</h4>
          {run.report ? <div class="markdown report" dangerouslySetInnerHTML={{ __html: renderMarkdown(run.report) }} /> : <p class="hint">The report is written once the sources are read.</p>}
        </section>
      )}
      <Sources run={run} />
    </article>
  );
}

/**
 * The report's sources: the pages read for it, numbered as it cites them, with everything the
 * searches found folded below; from a provider that does not say which pages it read, the
 * search results themselves.
 */
function Sources({ run }: { run: Run }) {
  const cited = run.read.length > 0;
  const listed: (Source & { n?: number })[] = cited ? run.read : run.sources;
  if (!listed.length) return null;
  return (
    <section aria-labelledby="sources-title">
      <h4 id="sources-title">Sources</h4>
      {cited && <p class="hint">The pages read for the report, numbered as it cites them.</p>}
      <ol class="sources">
        {listed.map((s) => (
          <SourceItem key={s.n ?? s.link} source={s} value={s.n} />
        ))}
      </ol>
      {cited && run.sources.length > run.read.length && (
        <details class="search-results">
          <summary>Everything the searches found ({run.sources.length})</summary>
          <ul class="sources">
            {run.sources.map((s) => (
              <SourceItem key={s.link} source={s} />
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

/** A source's link (http(s) only: research-run.ts) and its host. */
function SourceItem({ source, value }: { source: Source; value?: number }) {
  return (
    <li value={value}>
      <a href={source.link} target="_blank" rel="noopener noreferrer">
        {source.title}
      </a>{' '}
      <span class="hint">{source.host}</span>
    </li>
  );
}

/** Asks for the browser's permission only on this click; says where things stand otherwise. */
function NotifyButton({ notify }: { notify: ReturnType<typeof useNotifyPermission> }) {
  if (notify.permission === 'unsupported') return null;
  if (notify.permission === 'denied') return <p class="hint">Notifications are blocked for this site in your browser.</p>;
  if (notify.asked) return <p class="hint">You will get a notification when it is done.</p>;
  return (
    <button type="button" onClick={() => void notify.ask()}>
      Notify me when it's done
    </button>
  );
}
