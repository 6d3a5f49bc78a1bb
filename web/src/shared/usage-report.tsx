import './usage-report.css';
import { useEffect, useState } from 'preact/hooks';
import { call } from './api';
import { messageOf, Note } from './note';

/** One group of a usage report (docs/usage.md), as `usage/getUsage` and `admin/getUsage` answer it. */
interface UsageGroup {
  key: string | null;
  label: string | null;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  units: number;
  calls: number;
  estimatedCalls: number;
  credits: number;
}
interface UsageReport {
  from: string;
  to: string;
  by: string;
  totals: Omit<UsageGroup, 'key' | 'label'>;
  groups: UsageGroup[];
}

const BY_NAMES: Record<string, string> = { day: 'Day', model: 'Model', key: 'API key', kind: 'Kind', user: 'User' };
const DAYS = [7, 30, 90];
const n = (x: number) => x.toLocaleString();
const DAY_MS = 86_400_000;

const nameOf = (g: UsageGroup, by: string) => g.label ?? g.key ?? (by === 'key' ? 'Without a key (web app, background work)' : '—');
const tokensOf = (g: Omit<UsageGroup, 'key' | 'label'>) => g.inputTokens + g.outputTokens;

/**
 * Usage of models over the last days, summed by one thing (the select), as a bar chart of tokens
 * and a table: the user's own (`usage/getUsage`, Settings) or everyone's (`admin/getUsage`, Admin).
 */
export function UsageReportView({ operation, groupings, id }: { operation: 'usage/getUsage' | 'admin/getUsage'; groupings: string[]; id: string }) {
  const [by, setBy] = useState(groupings[0]!);
  const [days, setDays] = useState(30);
  const [report, setReport] = useState<UsageReport>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    const to = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - (days - 1) * DAY_MS).toISOString().slice(0, 10);
    call<UsageReport>(operation, { from, to, by }).then(
      (r) => (setReport(r), setError(undefined)),
      (err) => setError(messageOf(err)),
    );
  }, [by, days]);
  const max = Math.max(1, ...(report?.groups.map(tokensOf) ?? []));
  return (
    <div class="usage-report" aria-busy={!report && !error}>
      <div class="usage-controls">
        <label>
          Group by{' '}
          <select value={by} onChange={(e) => setBy(e.currentTarget.value)}>
            {groupings.map((g) => (
              <option key={g} value={g}>
                {BY_NAMES[g]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Period{' '}
          <select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {DAYS.map((d) => (
              <option key={d} value={d}>
                Last {d} days
              </option>
            ))}
          </select>
        </label>
      </div>
      <Note error={error} />
      {report && !report.groups.length && <p class="hint">No model calls in these days.</p>}
      {report && report.groups.length > 0 && (
        <>
          <ul class="usage-chart" aria-label={`Tokens by ${BY_NAMES[report.by]!.toLowerCase()}`}>
            {report.groups.map((g) => (
              <li key={g.key ?? ''}>
                <span class="usage-bar-name">{nameOf(g, report.by)}</span>
                <span class="usage-bar" style={{ width: `${(tokensOf(g) / max) * 100}%` }} />
                <span class="usage-bar-value">{n(tokensOf(g))} tokens</span>
              </li>
            ))}
          </ul>
          <div class="usage-table-wrap" tabIndex={0} role="region" aria-label="Usage table">
            <table class="usage-table" aria-labelledby={id}>
              <thead>
                <tr>
                  <th scope="col">{BY_NAMES[report.by]}</th>
                  <th scope="col">Input tokens</th>
                  <th scope="col">Output tokens</th>
                  <th scope="col">Cached</th>
                  <th scope="col">Reasoning</th>
                  <th scope="col">Units</th>
                  <th scope="col">Calls</th>
                  <th scope="col">Credits</th>
                </tr>
              </thead>
              <tbody>
                {[...report.groups.map((g) => ({ name: nameOf(g, report.by), ...g })), { name: 'Total', key: '\0total', ...report.totals }].map((g) => (
                  <tr key={g.key ?? ''}>
                    <th scope="row">{g.name}</th>
                    <td>{n(g.inputTokens)}</td>
                    <td>{n(g.outputTokens)}</td>
                    <td>{n(g.cachedTokens)}</td>
                    <td>{n(g.reasoningTokens)}</td>
                    <td>{n(g.units)}</td>
                    <td>
                      {n(g.calls)}
                      {g.estimatedCalls > 0 && <span class="hint"> ({n(g.estimatedCalls)} estimated)</span>}
                    </td>
                    <td>{n(g.credits)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}
