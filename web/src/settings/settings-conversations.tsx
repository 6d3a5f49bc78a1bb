import { useState } from 'preact/hooks';
import { CONVERSATIONS_CHANGED } from '../shared/api';
import { asJson, asMarkdown, download, exportAll, importConversations, parseImport } from '../chat/transfer';
import { useOutcome } from './settings-shared';

/** All conversations out (Markdown or JSON), and conversations in (a Parley JSON export, or ChatGPT's). */
export function ConversationsSection() {
  const outcome = useOutcome();
  const [busy, setBusy] = useState('');
  const exportAs = async (kind: 'md' | 'json') => {
    outcome.clear();
    try {
      const all = await exportAll((n) => setBusy(`Exporting… ${n}`));
      const stamp = new Date().toISOString().slice(0, 10);
      if (kind === 'md') download(`parley-conversations-${stamp}.md`, asMarkdown(all), 'text/markdown');
      else download(`parley-conversations-${stamp}.json`, asJson(all), 'application/json');
      outcome.done(`Exported ${all.length} conversation(s).`);
    } catch (err) {
      outcome.failed(err, 'Exporting');
    } finally {
      setBusy('');
    }
  };
  const importFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    outcome.clear();
    try {
      const list = parseImport(await file.text());
      const r = await importConversations(list, (n, wait) => setBusy(`Importing… ${n} of ${list.length}${wait ? ` (the server asks to wait ${wait} s)` : ''}`));
      const skipped = r.skipped ? `; ${r.skipped} without messages were skipped` : '';
      if (r.imported) dispatchEvent(new Event(CONVERSATIONS_CHANGED));
      // Stopped mid-file (a cap on what imports keep): what came in, and the server's sentence
      // saying which cap and how to make room.
      if (r.stopped) outcome.failed(r.stopped.error, `Imported ${r.imported} of ${list.length} conversation(s)${skipped}. Importing "${r.stopped.title}"`);
      else outcome.done(`Imported ${r.imported} conversation(s)${skipped}.`);
    } catch (err) {
      outcome.failed(err, 'Importing');
    } finally {
      setBusy('');
    }
  };
  return (
    <section class="settings-section" aria-labelledby="conversations-title">
      <h3 id="conversations-title">Your conversations</h3>
      <p class="hint">Download them all, to read or to keep; bring conversations in from a Parley JSON export or from ChatGPT (its data export's conversations.json).</p>
      <div class="button-row">
        <button type="button" disabled={!!busy} onClick={() => exportAs('md')}>
          Export all as Markdown
        </button>
        <button type="button" disabled={!!busy} onClick={() => exportAs('json')}>
          Export all as JSON
        </button>
        <span class="attach">
          <input id="import-file" class="visually-hidden" type="file" accept=".json,application/json" disabled={!!busy} onChange={(e) => void importFile(e.currentTarget)} />
          <label for="import-file" class="button">
            Import from ChatGPT or Parley
          </label>
        </span>
      </div>
      <p class="hint" aria-live="polite">
        {busy}
      </p>
      {outcome.view}
    </section>
  );
}
