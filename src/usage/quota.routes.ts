import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { notFound } from '../http/errors';
import type { AppDeps } from '../deps';
import type { Tx, Work } from '../db/work';
import { deletePrice, deleteTier, savePrice, saveTier } from './usage.store';
import { MAX_PRICE, priceRowOf, quotaSettings, tierRowOf } from './quota-settings';
import { PERIODS } from './periods';

// Quotas (docs/usage.md, "Quotas"): the admins' tiers and prices, which the metering service
// (metering.ts) keeps in memory and reads again when they change here.

const ADMIN_ONLY = 'Admins only: any other caller is answered 403.';
const Allowance = (what: string) => t.Union([t.Integer({ minimum: 0 }), t.Null()], { description: `${what} a period; null: no limit.` });

const TierSchema = t.Object({
  name: t.String({ description: 'A subscription tier (`users.subscription_tier`: FREE, PLUS, PRO or any other).' }),
  period: t.Union(PERIODS.map((p) => t.Literal(p)), { description: 'day, week (from Monday) or month, in UTC.' }),
  tokens: Allowance('Tokens in and out of chat, research, group and /v1 calls'),
  researchRuns: Allowance('Deep research runs begun'),
  images: Allowance('Images made'),
  updatedAt: t.String(),
});

const Credits = (what: string) => t.Number({ minimum: 0, maximum: MAX_PRICE, description: `Credits ${what}.` });
const PriceSchema = t.Object({
  model: t.String({ description: 'The catalogue id (`<connection>/<model>`).' }),
  inputPerMillion: Credits('per million input tokens'),
  outputPerMillion: Credits('per million output tokens'),
  perUnit: Credits('per image, second transcribed or character spoken'),
  perRequest: Credits('per call'),
  updatedAt: t.String(),
});

const Settings = t.Object({ tiers: t.Array(TierSchema), prices: t.Array(PriceSchema) });

async function changed(deps: AppDeps) {
  deps.usage.changed?.();
  return quotaSettings(deps.store);
}

/** Remove a tier's or a price's row, by its key; 404 when there was none. */
function removeOperation<K extends 'name' | 'model'>(path: `admin/${string}`, summary: string, what: string, key: K, maxLength: number, remove: (tx: Tx, id: string) => Work<boolean>) {
  return defineOperation({
    path,
    admin: true,
    summary,
    description: `${ADMIN_ONLY} An unknown ${what}: 404. docs/usage.md.`,
    input: t.Object({ [key]: t.String({ minLength: 1, maxLength }) } as Record<K, ReturnType<typeof t.String>>),
    output: Settings,
    errors: [403, 404],
    rateLimit: 'write',
    handler: async ({ input, deps }) => {
      const id = (input as unknown as Record<K, string>)[key];
      if (!(await deps.store.write((tx) => remove(tx, id)))) throw notFound();
      return changed(deps);
    },
  });
}

export const quotaOperations = [
  defineOperation({
    path: 'admin/getUsageQuotas',
    admin: true,
    summary: 'The tiers\' allowances and the models\' prices in credits',
    description: `${ADMIN_ONLY} A tier without a row limits nothing; a model without a price cannot be paid for with credits once an allowance is used up. docs/usage.md.`,
    input: t.Object({}),
    output: Settings,
    errors: [403],
    handler: ({ deps }) => quotaSettings(deps.store),
  }),
  defineOperation({
    path: 'admin/setUsageTier',
    admin: true,
    summary: "Set a tier's allowances per period",
    description: `${ADMIN_ONLY} Replaces the tier's row (an allowance left out: no limit). Every instance uses it within seconds. docs/usage.md.`,
    input: t.Object({
      name: t.String({ minLength: 1, maxLength: 40 }),
      period: t.Union(PERIODS.map((p) => t.Literal(p))),
      tokens: t.Optional(t.Union([t.Integer({ minimum: 0 }), t.Null()])),
      researchRuns: t.Optional(t.Union([t.Integer({ minimum: 0 }), t.Null()])),
      images: t.Optional(t.Union([t.Integer({ minimum: 0 }), t.Null()])),
    }),
    output: Settings,
    errors: [403],
    rateLimit: 'write',
    handler: async ({ input, deps }) => {
      await deps.store.write((tx) => saveTier(tx, tierRowOf(input, deps.now())));
      return changed(deps);
    },
  }),
  removeOperation('admin/removeUsageTier', "Remove a tier's allowances: it limits nothing", 'tier', 'name', 40, deleteTier),
  defineOperation({
    path: 'admin/setModelPrice',
    admin: true,
    summary: "Set a model's price in credits",
    description: `${ADMIN_ONLY} What a call past its user's allowance costs, in bonus credits (to a millionth). docs/usage.md.`,
    input: t.Object({
      model: t.String({ minLength: 1, maxLength: 300 }),
      inputPerMillion: t.Optional(t.Number({ minimum: 0, maximum: MAX_PRICE })),
      outputPerMillion: t.Optional(t.Number({ minimum: 0, maximum: MAX_PRICE })),
      perUnit: t.Optional(t.Number({ minimum: 0, maximum: MAX_PRICE })),
      perRequest: t.Optional(t.Number({ minimum: 0, maximum: MAX_PRICE })),
    }),
    output: Settings,
    errors: [403],
    rateLimit: 'write',
    handler: async ({ input, deps }) => {
      await deps.store.write((tx) => savePrice(tx, priceRowOf(input, deps.now())));
      return changed(deps);
    },
  }),
  removeOperation('admin/removeModelPrice', "Remove a model's price: it cannot be paid for with credits", 'model', 'model', 300, deletePrice),
];
