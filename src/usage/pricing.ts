import type { UsageKind, UsageReport } from './usage.types';

/** The kinds whose tokens a tier's token allowance counts: the answers people ask for. */
export const TOKEN_KINDS: ReadonlySet<UsageKind> = new Set<UsageKind>(['chat', 'research', 'group', 'title', 'v1']);

/** A model's price in millionths of a credit: per million input and output tokens, per unit, per request. */
export interface Price {
  inputMicro: number;
  outputMicro: number;
  unitMicro: number;
  requestMicro: number;
}

/** What a call's quantities cost, in millionths of a credit, rounded up. */
export function costMicro(price: Price, q: { inputTokens: number; outputTokens: number; units: number; requests: number }): number {
  const tokens = (q.inputTokens * price.inputMicro + q.outputTokens * price.outputMicro) / 1_000_000;
  return Math.ceil(tokens + q.units * price.unitMicro + q.requests * price.requestMicro);
}

/** The tokens a report counts against the token allowance: input and output of the token kinds. */
export const allowanceTokensOf = (kind: UsageKind, r: UsageReport): number => (TOKEN_KINDS.has(kind) ? whole(r.inputTokens) + whole(r.outputTokens) : 0);

/** The images a report counts against the image allowance. */
export const allowanceImagesOf = (kind: UsageKind, r: UsageReport): number => (kind === 'images' ? Math.max(1, whole(r.units)) : 0);

/** A count as stored: a non-negative integer (a provider may send anything). */
export const whole = (n: number | undefined): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0);

/**
 * The part of a call past the allowance, priced: `coveredTokens` of its `tokens` (and images) fit
 * what is left; the rest is charged in proportion (input and output alike), plus the request's
 * price when any of it is past. 0 when all of it fits.
 */
export function excessCost(price: Price, r: UsageReport, kind: UsageKind, covered: { tokens: number; images: number }): number {
  const tokens = allowanceTokensOf(kind, r);
  const images = allowanceImagesOf(kind, r);
  const pastTokens = tokens - covered.tokens;
  const pastImages = images - covered.images;
  // Kinds outside every allowance (embeddings, speech) are never charged.
  if (pastTokens <= 0 && pastImages <= 0) return 0;
  const share = tokens > 0 ? pastTokens / tokens : 0;
  return costMicro(price, {
    inputTokens: whole(r.inputTokens) * share,
    outputTokens: whole(r.outputTokens) * share,
    units: pastImages,
    requests: 1,
  });
}
