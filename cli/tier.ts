import { Option, type Command } from 'commander';
import { deleteTier, saveTier } from '../src/usage/usage.store';
import { PERIODS } from '../src/usage/periods';
import { quotaChanged, quotaSettings, tierRowOf, type QuotaSettings, type TierView } from '../src/usage/quota-settings';
import type { Tx, Work } from '../src/db/work';
import { alignedTable } from './table';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';

/**
 * `parley tier`: the tiers' allowances (docs/usage.md, "Quotas"), as admin/getUsageQuotas,
 * admin/setUsageTier and admin/removeUsageTier change them.
 */

/**
 * Write a change of tiers or prices and tell the running servers: the settings after it, or
 * undefined when `work` found nothing to change.
 */
export async function changeQuotas(opts: CommonOptions, work: (tx: Tx) => Work<boolean | void>): Promise<QuotaSettings | undefined> {
  const { store, bus } = await openCliStore(opts);
  if ((await store.write(work)) === false) return undefined;
  quotaChanged(bus);
  return quotaSettings(store);
}

const limit = (n: number | null, none = 'no limit') => (n === null ? none : n.toLocaleString('en-US'));
const describe = (t: TierView) => {
  const of = (n: number | null) => limit(n, 'any number of');
  return `${t.name}: ${of(t.tokens)} tokens, ${of(t.researchRuns)} research runs, ${of(t.images)} images a ${t.period}`;
};

/** `--tokens 10000`; `none` (or left out): no limit. */
function allowanceOf(flag: string, given: string | undefined): number | null {
  if (given === undefined || given === 'none') return null;
  const n = /^\d+$/.test(given) ? Number(given) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new CliError(`${flag} must be a whole number of 0 or more, or none, got ${given}`);
  return n;
}

function tierName(name: string): string {
  if (!name.trim() || name.length > 40) throw new CliError('a tier name has 1 to 40 characters (FREE, PLUS, PRO or any other)');
  return name;
}

type SetOptions = CommonOptions & { period: (typeof PERIODS)[number]; tokens?: string; researchRuns?: string; images?: string };

export function tierCommands(program: Command) {
  const tier = program.command('tier').description("subscription tiers' allowances per period (docs/usage.md, \"Quotas\")");

  common(tier.command('list'))
    .description("every tier's allowances (a tier without a row limits nothing)")
    .action(
      runAction(async (opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        const { tiers } = await quotaSettings(store);
        const rows = tiers.map((t) => [t.name, t.period, limit(t.tokens), limit(t.researchRuns), limit(t.images)]);
        output(opts, tiers, tiers.length ? alignedTable(['tier', 'period', 'tokens', 'research runs', 'images'], rows) : 'no tier limits anything');
      }),
    );

  common(tier.command('set'))
    .description("set a tier's allowances, replacing its row: an allowance left out is no limit")
    .argument('<name>', 'the subscription tier (users.subscription_tier), e.g. FREE')
    .addOption(new Option('--period <period>', 'the allowances renew each day, week (from Monday) or month, in UTC').choices(PERIODS).makeOptionMandatory())
    .option('--tokens <n>', 'tokens in and out of chat, research, group and /v1 calls a period, or none')
    .option('--research-runs <n>', 'deep research runs begun a period, or none')
    .option('--images <n>', 'images made a period, or none')
    .action(
      runAction(async (name: string, opts: SetOptions) => {
        const row = tierRowOf(
          { name: tierName(name), period: opts.period, tokens: allowanceOf('--tokens', opts.tokens), researchRuns: allowanceOf('--research-runs', opts.researchRuns), images: allowanceOf('--images', opts.images) },
          Date.now(),
        );
        const saved = (await changeQuotas(opts, (tx) => saveTier(tx, row)))!.tiers.find((t) => t.name === row.name)!;
        output(opts, saved, `set ${describe(saved)}`);
      }),
    );

  common(tier.command('remove'))
    .description("remove a tier's allowances: it limits nothing")
    .argument('<name>', 'the subscription tier')
    .action(
      runAction(async (name: string, opts: CommonOptions) => {
        if (!(await changeQuotas(opts, (tx) => deleteTier(tx, name)))) throw new CliError(`no tier ${name} has allowances (parley tier list)`);
        output(opts, { removed: true, name }, `removed ${name}'s allowances: it limits nothing now`);
      }),
    );
}
