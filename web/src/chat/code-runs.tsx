import type { CodeFile, CodeRun } from './answer-parts';
import { Markdown } from '../shared/markdown-view';

const LANGUAGE_NAMES: Record<string, string> = { python: 'Python', javascript: 'JavaScript' };
/** Images a run wrote that the page shows in place (a plot); any other file is a download link. */
const SHOWN = new Set(['image/svg+xml', 'image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/**
 * The code an answer ran (docs/code-interpreter.md): folded by default — the code highlighted (the
 * Markdown view's lazily loaded chunk, as a fenced block), what it printed and its error — with
 * the files it wrote always in view: plots shown as images, every file downloadable.
 */
export function CodeRuns({ runs }: { runs: CodeRun[] }) {
  if (!runs.length) return null;
  return (
    <div class="code-runs">
      {runs.map((r, i) => (
        <section key={r.id || i} class={`code-run${r.error ? ' code-run-failed' : ''}`} aria-label={`Code run ${i + 1}`}>
          <details>
            <summary>{summaryOf(r)}</summary>
            {r.code && <Markdown text={fenced(r.code, r.language)} class="code-run-code" />}
            {r.output && (
              <>
                <h5>Output</h5>
                <pre class="code-run-output" tabIndex={0}>{r.output}</pre>
              </>
            )}
            {r.error && (
              <>
                <h5>Error</h5>
                <pre class="code-run-error" tabIndex={0}>{r.error}</pre>
              </>
            )}
          </details>
          {r.files.length > 0 && <CodeFiles files={r.files} />}
        </section>
      ))}
    </div>
  );
}

function summaryOf(r: CodeRun): string {
  const lang = LANGUAGE_NAMES[r.language ?? ''] ?? 'code';
  if (r.state === 'running') return `Running ${lang}${lang === 'code' ? '' : ' code'}…`;
  return `Ran ${lang}${lang === 'code' ? '' : ' code'}${r.error ? ': it failed' : ''}`;
}

/** A fence longer than any run of backticks in the code, so the code cannot close it early. */
function fenced(code: string, language: string | undefined): string {
  const longest = Math.max(2, ...[...code.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language && /^[a-z]+$/.test(language) ? language : ''}\n${code}\n${fence}`;
}

function CodeFiles({ files }: { files: CodeFile[] }) {
  return (
    <ul class="code-run-files" aria-label="Files the code wrote">
      {files.map((f) => {
        const url = `/api/files/${encodeURIComponent(f.fileId)}/content`;
        return (
          <li key={f.fileId}>
            {SHOWN.has(f.contentType) && <img src={url} alt={f.filename} loading="lazy" />}
            <a href={url} download={f.filename}>
              {f.filename}
            </a>
            {f.size > 0 && <span class="hint"> · {sizeOf(f.size)}</span>}
          </li>
        );
      })}
    </ul>
  );
}

const sizeOf = (n: number) => (n < 1024 ? `${n} bytes` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);
