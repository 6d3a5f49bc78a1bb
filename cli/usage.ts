import { Option, type Command } from 'commander';
import { csvField } from '../src/feedback/feedback-export';
import { rangeOf, usageReport, type UsageReportView } from '../src/usage/usage.view';
import type { UsageGrouping } from '../src/usage/usage.store';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';
import { requireUser } from './user';
import { alignedTable } from './table';

type UsageOptions = CommonOptions & { from?: string; to?: string; by: UsageGrouping; email?: string; csv?: boolean };

const COLUMNS = ['inputTokens', 'outputTokens', 'cachedTokens', 'reasoningTokens', 'units', 'calls', 'estimatedCalls', 'credits'] as const;

export function usageCommands(program: Command) {
  common(program.command('usage'))
    .description("model usage by user, API key, model, day or kind, as recorded (docs/usage.md); the same report as admin/getUsage")
    .option('--from <day>', 'first day, YYYY-MM-DD UTC (default: 29 days before --to)')
    .option('--to <day>', 'last day, YYYY-MM-DD UTC (default: today)')
    .addOption(new Option('--by <what>', 'what the usage is summed by').choices(['user', 'key', 'model', 'day', 'kind']).default('user'))
    .option('--email <email>', "only this user's usage")
    .option('--csv', 'print CSV (RFC 4180, with a header): one row a group')
    .action(
      runAction(async (opts: UsageOptions) => {
        if (opts.csv && opts.json) throw new CliError('--csv and --json: choose one');
        const range = rangeOf(Date.now(), opts);
        if ('error' in range) throw new CliError(`--${range.path} ${range.error}`);
        const { store } = await openCliStore(opts);
        const userId = opts.email ? (await requireUser(store, opts.email)).id : undefined;
        const report = await usageReport(store, { ...range, userId, by: opts.by });
        if (opts.csv) process.stdout.write(csvOf(report));
        else output(opts, report, tableOf(report));
      }),
    );
}

const csvRow = (fields: (string | number | null)[]) => `${fields.map((f) => csvField(f === null ? '' : String(f))).join(',')}\r\n`;

function csvOf(r: UsageReportView): string {
  return csvRow([r.by, 'label', ...COLUMNS]) + r.groups.map((g) => csvRow([g.key, g.label, ...COLUMNS.map((c) => g[c])])).join('');
}

/** The groups, then the totals. */
function tableOf(r: UsageReportView): string {
  const head = [r.by, 'input', 'output', 'cached', 'reasoning', 'units', 'calls', 'estimated', 'credits'];
  const name = (g: { key: string | null; label: string | null }) => g.label ?? g.key ?? (r.by === 'key' ? '(no key)' : '-');
  const rows = [...r.groups.map((g) => [name(g), ...COLUMNS.map((c) => String(g[c]))]), ['total', ...COLUMNS.map((c) => String(r.totals[c]))]];
  return `usage ${r.from} to ${r.to}, by ${r.by}\n${alignedTable(head, rows)}`;
}
