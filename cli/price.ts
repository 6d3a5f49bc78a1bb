import type { Command } from 'commander';
import { deletePrice, savePrice } from '../src/usage/usage.store';
import { MAX_PRICE, priceRowOf, quotaSettings, type PriceView } from '../src/usage/quota-settings';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';
import { alignedTable } from './table';
import { changeQuotas } from './tier';

/**
 * `parley price`: the models' prices in bonus credits (docs/usage.md, "Quotas"), as
 * admin/getUsageQuotas, admin/setModelPrice and admin/removeModelPrice change them.
 */

const credits = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 6 });
const describe = (p: PriceView) =>
  `${p.model}: ${credits(p.inputPerMillion)} in and ${credits(p.outputPerMillion)} out per million tokens, ${credits(p.perUnit)} per unit, ${credits(p.perRequest)} per call`;

/** Credits as a plain decimal (`0.5`, `12`), at most MAX_PRICE; left out: 0. */
function creditsOf(flag: string, given: string | undefined): number {
  if (given === undefined) return 0;
  const n = /^\d+(\.\d+)?$/.test(given) ? Number(given) : Number.NaN;
  if (!(n <= MAX_PRICE)) throw new CliError(`${flag} must be credits from 0 to ${MAX_PRICE.toLocaleString('en-US')} (e.g. 0.5), got ${given}`);
  return n;
}

type SetOptions = CommonOptions & { input?: string; output?: string; perUnit?: string; perRequest?: string };

export function priceCommands(program: Command) {
  const price = program.command('price').description("models' prices in bonus credits, paid once a tier's allowance is used up (docs/usage.md, \"Quotas\")");

  common(price.command('list'))
    .description("every model's price (a model without one cannot be paid for with credits)")
    .action(
      runAction(async (opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        const { prices } = await quotaSettings(store);
        const rows = prices.map((p) => [p.model, credits(p.inputPerMillion), credits(p.outputPerMillion), credits(p.perUnit), credits(p.perRequest)]);
        output(opts, prices, prices.length ? alignedTable(['model', 'input/M', 'output/M', 'per unit', 'per call'], rows) : 'no model has a price');
      }),
    );

  common(price.command('set'))
    .description("set a model's price, replacing its row: a price left out is 0")
    .argument('<model>', 'the catalogue id, <connection>/<model> (chat/listModels, GET /v1/models)')
    .option('--input <credits>', 'credits per million input tokens')
    .option('--output <credits>', 'credits per million output tokens')
    .option('--per-unit <credits>', 'credits per image, second transcribed or character spoken')
    .option('--per-request <credits>', 'credits per call')
    .action(
      runAction(async (model: string, opts: SetOptions) => {
        if (!model.trim() || model.length > 300) throw new CliError('a model id has 1 to 300 characters: <connection>/<model>');
        const row = priceRowOf(
          { model, inputPerMillion: creditsOf('--input', opts.input), outputPerMillion: creditsOf('--output', opts.output), perUnit: creditsOf('--per-unit', opts.perUnit), perRequest: creditsOf('--per-request', opts.perRequest) },
          Date.now(),
        );
        const saved = (await changeQuotas(opts, (tx) => savePrice(tx, row)))!.prices.find((p) => p.model === model)!;
        output(opts, saved, `set ${describe(saved)}`);
      }),
    );

  common(price.command('remove'))
    .description("remove a model's price: it cannot be paid for with credits")
    .argument('<model>', 'the catalogue id')
    .action(
      runAction(async (model: string, opts: CommonOptions) => {
        if (!(await changeQuotas(opts, (tx) => deletePrice(tx, model)))) throw new CliError(`no price for ${model} (parley price list)`);
        output(opts, { removed: true, model }, `removed the price of ${model}: it cannot be paid for with credits now`);
      }),
    );
}
