import type { UsagePriceRow, UsageTierRow } from '../db/schema';
import type { Store } from '../db/work';
import type { Bus } from '../pubsub/bus';
import { USAGE_TOPIC } from './metering';
import { iso } from '../ids';
import { listPrices, listTiers } from './usage.store';
import type { Period } from './periods';

/**
 * The admins' tiers and prices (docs/usage.md, "Quotas") as `admin/*` operations and `parley tier`
 * and `parley price` read and write them: one shape for both callers, credits given and shown in
 * whole credits and kept in millionths.
 */

const MICRO = 1_000_000;
/** The largest price a field takes, in credits. */
export const MAX_PRICE = 1_000_000;

export interface TierInput {
  name: string;
  period: Period;
  /** A limit a period; left out or null: no limit. */
  tokens?: number | null;
  researchRuns?: number | null;
  images?: number | null;
}

export interface PriceInput {
  model: string;
  /** Credits; left out: 0. */
  inputPerMillion?: number;
  outputPerMillion?: number;
  perUnit?: number;
  perRequest?: number;
}

export const tierRowOf = (input: TierInput, now: number): UsageTierRow => ({
  name: input.name,
  period: input.period,
  tokens: input.tokens ?? null,
  researchRuns: input.researchRuns ?? null,
  images: input.images ?? null,
  updatedAt: now,
});

const micro = (credits: number | undefined) => Math.round((credits ?? 0) * MICRO);

export const priceRowOf = (input: PriceInput, now: number): UsagePriceRow => ({
  model: input.model,
  inputMicro: micro(input.inputPerMillion),
  outputMicro: micro(input.outputPerMillion),
  unitMicro: micro(input.perUnit),
  requestMicro: micro(input.perRequest),
  updatedAt: now,
});

export const tierView = (r: UsageTierRow) => ({ ...r, period: r.period as Period, updatedAt: iso(r.updatedAt) });

export const priceView = (r: UsagePriceRow) => ({
  model: r.model,
  inputPerMillion: r.inputMicro / MICRO,
  outputPerMillion: r.outputMicro / MICRO,
  perUnit: r.unitMicro / MICRO,
  perRequest: r.requestMicro / MICRO,
  updatedAt: iso(r.updatedAt),
});

export type TierView = ReturnType<typeof tierView>;
export type PriceView = ReturnType<typeof priceView>;

export interface QuotaSettings {
  tiers: TierView[];
  prices: PriceView[];
}

/** Every tier's allowances and every model's price, as `admin/getUsageQuotas` answers. */
export async function quotaSettings(store: Store): Promise<QuotaSettings> {
  const { tiers, prices } = await store.read(function* (tx) {
    return { tiers: yield* listTiers(tx), prices: yield* listPrices(tx) };
  });
  return { tiers: tiers.map(tierView), prices: prices.map(priceView) };
}

/**
 * A change made outside the running servers (`parley tier`, `parley price`): on PostgreSQL the
 * cluster bus tells them at once; beside a SQLite server nothing carries it, and the server reads
 * them again within 10 s (metering.ts).
 */
export function quotaChanged(bus: Bus): void {
  bus.publish(USAGE_TOPIC, { from: 'cli' });
}
