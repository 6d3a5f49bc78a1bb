import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';

type Approval = 'ask' | 'never';
interface SourceTool {
  name: string;
  label: string;
  description: string;
  approval: Approval;
}
interface Source {
  id: string;
  label: string;
  enabled: boolean;
  /** false: it can offer nothing here (no connection, no runtime): `unavailableReason` says why. */
  available: boolean;
  unavailableReason: string | null;
  /** What turning it on costs (the code interpreter's memory). */
  note: string | null;
  tiers: string[] | null;
  approval: Approval;
  tools: SourceTool[];
}
interface ToolSettings {
  sources: Source[];
  tools: { name: string; approval: Approval }[];
}
type Change = { sources?: { id: string; enabled?: boolean; tiers?: string[] | null; approval?: Approval }[]; tools?: { name: string; approval: Approval | null }[] };

const tiersOf = (text: string) => {
  const list = text.split(',').map((t) => t.trim().toUpperCase()).filter(Boolean);
  return list.length ? list : null;
};

/**
 * The tools the assistant may call, by source (`admin/getToolSettings`, docs/assistants.md): a
 * source on or off, for some subscription tiers only, and "ask first" for a whole source or one
 * tool, which makes each call wait for the user's answer in the chat.
 */
export function AdminTools() {
  const [settings, setSettings] = useState<ToolSettings>();
  const [note, setNote] = useState<{ error?: string; done?: string }>({});
  useEffect(() => {
    call<ToolSettings>('admin/getToolSettings').then(setSettings, (err) => setNote({ error: messageOf(err) }));
  }, []);
  const change = async (body: Change, done: string) => {
    try {
      setSettings(await call<ToolSettings>('admin/setToolSettings', body));
      setNote({ done });
    } catch (err) {
      setNote({ error: messageOf(err) });
    }
  };
  // A tool's own choice wins over its source's: unticking a tool of a source that asks exempts it.
  const setToolAsks = (s: Source, t: SourceTool, asks: boolean) =>
    change({ tools: [{ name: t.name, approval: asks ? 'ask' : s.approval === 'ask' ? 'never' : null }] }, `${t.label} ${asks ? 'asks first now' : 'runs without asking now'}.`);

  return (
    <section class="admin-section" aria-labelledby="admin-tools">
      <h3 id="admin-tools">Tools</h3>
      <p class="hint">
        What the assistant may use in chat and research. A tool marked “ask first” waits, at each call, until the user allows it in the chat (or denies it; after{' '}
        <code>PARLEY_TOOL_APPROVAL_TIMEOUT_S</code> it counts as denied). Changes apply from the next answer.
      </p>
      <Note {...note} />
      {settings && (
        <div class="admin-table-wrap">
          <table class="admin-table admin-tools">
            <caption class="visually-hidden">Tool sources</caption>
            <thead>
              <tr>
                <th scope="col">Source</th>
                <th scope="col">On</th>
                <th scope="col">Ask first</th>
                <th scope="col">Tiers</th>
                <th scope="col">Its tools now</th>
              </tr>
            </thead>
            <tbody>
              {settings.sources.map((s) => (
                <tr key={s.id}>
                  <th scope="row">
                    {s.label} <span class="hint">({s.id})</span>
                    {s.note && <p class="hint admin-tool-note">{s.note}</p>}
                  </th>
                  <td>
                    {/* A switch that could not work is not offered: the row says what is missing. */}
                    {s.available ? (
                      <input type="checkbox" aria-label={`${s.label}: on`} checked={s.enabled} onChange={(e) => change({ sources: [{ id: s.id, enabled: e.currentTarget.checked }] }, `${s.label} is ${e.currentTarget.checked ? 'on' : 'off'}.`)} />
                    ) : (
                      <span class="hint">{s.unavailableReason}</span>
                    )}
                  </td>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`${s.label}: ask first for every tool`}
                      checked={s.approval === 'ask'}
                      onChange={(e) => change({ sources: [{ id: s.id, approval: e.currentTarget.checked ? 'ask' : 'never' }] }, `${s.label}: ${e.currentTarget.checked ? 'every tool asks first' : 'its tools run without asking'}.`)}
                    />
                  </td>
                  <td>
                    <input
                      type="text"
                      aria-label={`${s.label}: tiers (comma-separated; empty for everyone)`}
                      placeholder="everyone"
                      defaultValue={s.tiers?.join(', ') ?? ''}
                      onChange={(e) => change({ sources: [{ id: s.id, tiers: tiersOf(e.currentTarget.value) }] }, `${s.label}: for ${tiersOf(e.currentTarget.value)?.join(', ') ?? 'everyone'}.`)}
                    />
                  </td>
                  <td>
                    {s.tools.length === 0 ? (
                      <span class="hint">none offered now</span>
                    ) : (
                      <ul class="admin-tool-list">
                        {s.tools.map((t) => (
                          <li key={t.name}>
                            <label title={t.description}>
                              <input type="checkbox" checked={t.approval === 'ask'} onChange={(e) => setToolAsks(s, t, e.currentTarget.checked)} /> Ask before {t.label}{' '}
                              <code class="hint">{t.name}</code>
                            </label>
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
