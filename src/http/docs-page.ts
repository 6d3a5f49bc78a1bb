import type { AnyOperation } from './operation';
import { compileInput, outputSchema } from './body';
import { errorStatusesOf } from './openapi';

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const json = (v: unknown) => esc(JSON.stringify(JSON.parse(JSON.stringify(v)), null, 2));

/**
 * The API reference as one self-contained HTML page: no script, no font, no CDN, so it works on
 * a Raspberry Pi with no internet. The machine-readable form is /api/openapi.json.
 */
export function docsPage(ops: readonly AnyOperation[]): string {
  const groups = new Map<string, AnyOperation[]>();
  for (const op of ops) {
    const g = op.path.split('/')[0]!;
    groups.set(g, [...(groups.get(g) ?? []), op]);
  }
  const nav = [...groups.keys()].map((g) => `<a href="#${g}">${g}</a>`).join(' · ');
  const sections = [...groups]
    .map(
      ([g, list]) =>
        `<h2 id="${g}">${g}</h2>` +
        list
          .map(
            (op) => `<section id="${esc(op.path)}"><h3><code>POST /api/${esc(op.path)}</code>${op.deprecated ? ' <em>(deprecated)</em>' : ''}${op.kind === 'sse' ? ' <em>(event stream)</em>' : ''}${op.public ? ' <em>(no credential needed)</em>' : ''}</h3>
<p>${esc(op.summary)}</p>${op.description ? `<p>${esc(op.description)}</p>` : ''}
<details><summary>Request body</summary><pre>${json(compileInput(op.input).schema)}</pre></details>
<details><summary>${op.kind === 'sse' ? 'Event data' : 'Response body'}</summary><pre>${json(outputSchema(op.output))}</pre></details>
<p class="err">Errors: ${errorStatusesOf(op).join(', ')} — always the envelope <code>{defined, code, status, message, data}</code>.</p></section>`,
          )
          .join('\n'),
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Parley API</title><style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f5;padding:.75rem;overflow:auto}
section{border-top:1px solid #ddd;padding:.5rem 0}h3{margin:.5rem 0}.err{color:#555}
</style></head><body><h1>Parley API</h1>
<p>Every operation is <code>POST /api/&lt;category&gt;/&lt;name&gt;</code> with a JSON body, authenticated by a session cookie, <code>Authorization: Bearer &lt;token&gt;</code> or <code>x-api-key</code>. Another method on an operation's path answers 405 with <code>Allow: POST</code>. Machine-readable: <a href="/api/openapi.json">/api/openapi.json</a>.</p>
<nav>${nav}</nav>${sections}</body></html>`;
}
