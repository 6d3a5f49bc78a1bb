import { t } from 'elysia';
import type { Store } from '../db/work';
import { DAY_MS } from '../time';
import { sumUsage, type UsageGroup, type UsageGrouping } from './usage.store';
import { dayOf } from './periods';

/** Days a report covers when it names none: the last 30, today included. */
export const DEFAULT_DAYS = 30;
/** The longest range one report sums (a year and a month, the default retention). */
export const MAX_DAYS = 400;

const Day = t.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A day, `YYYY-MM-DD`, UTC.' });

/** The input every usage report takes: a range of whole UTC days. */
export const UsageRange = {
  from: t.Optional({ ...Day, description: `First day, \`YYYY-MM-DD\` UTC, included; default: ${DEFAULT_DAYS - 1} days before \`to\`.` }),
  to: t.Optional({ ...Day, description: 'Last day, `YYYY-MM-DD` UTC, included; default: today.' }),
};

const counts = {
  inputTokens: t.Integer({ description: 'Every input token, those read from the prompt cache included.' }),
  outputTokens: t.Integer({ description: 'Every output token, reasoning included.' }),
  cachedTokens: t.Integer({ description: 'Input read from the provider\'s prompt cache.' }),
  reasoningTokens: t.Integer({ description: 'Output spent thinking, where the provider says.' }),
  units: t.Integer({ description: 'Seconds transcribed, characters spoken, images made.' }),
  calls: t.Integer({ description: 'Model calls.' }),
  estimatedCalls: t.Integer({ description: 'Calls Parley counted because the provider reported nothing.' }),
  credits: t.Number({ description: 'Bonus credits spent.' }),
};

export const UsageGroupSchema = t.Object({
  key: t.Union([t.String(), t.Null()], { description: 'The day, model, API key id, kind or user id; null: calls made without an API key (by key).' }),
  label: t.Union([t.String(), t.Null()], { description: "For people: the key's name and prefix, the user's e-mail; null otherwise." }),
  ...counts,
});

export const UsageReportSchema = t.Object({
  from: Day,
  to: Day,
  by: t.String(),
  totals: t.Object(counts),
  groups: t.Array(UsageGroupSchema),
});

export type UsageReportView = typeof UsageReportSchema.static;

/** A range of whole days as asked for, checked: `undefined` and a reason when it is not one. */
export function rangeOf(now: number, input: { from?: string; to?: string }): { since: number; until: number; from: string; to: string } | { error: string; path: 'from' | 'to' } {
  const to = input.to ?? dayOf(now);
  const until = Date.parse(`${to}T00:00:00Z`) + DAY_MS;
  if (Number.isNaN(until) || dayOf(until - DAY_MS) !== to) return { error: 'is not a day (YYYY-MM-DD)', path: 'to' };
  const from = input.from ?? dayOf(until - DEFAULT_DAYS * DAY_MS);
  const since = Date.parse(`${from}T00:00:00Z`);
  if (Number.isNaN(since) || dayOf(since) !== from) return { error: 'is not a day (YYYY-MM-DD)', path: 'from' };
  if (since >= until) return { error: 'is after `to`', path: 'from' };
  if (until - since > MAX_DAYS * DAY_MS) return { error: `spans more than ${MAX_DAYS} days`, path: 'from' };
  return { since, until, from, to };
}

const groupView = ({ creditsMicro, ...g }: UsageGroup) => ({ ...g, credits: creditsMicro / 1_000_000 });

/** Usage summed by `by` over a range, with the totals: a user's own, or everyone's (`userId` absent). */
export async function usageReport(store: Store, q: { userId?: string; since: number; until: number; from: string; to: string; by: UsageGrouping }): Promise<UsageReportView> {
  const groups = (await store.read((tx) => sumUsage(tx, q))).map(groupView);
  const totals = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0, units: 0, calls: 0, estimatedCalls: 0, credits: 0 };
  for (const g of groups) for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += g[k];
  totals.credits = Math.round(totals.credits * 1_000_000) / 1_000_000;
  return { from: q.from, to: q.to, by: q.by, totals, groups };
}

export const UsageCallSchema = t.Object({
  id: t.String(),
  createdAt: t.String({ description: 'ISO 8601.' }),
  kind: t.String({ description: 'chat, research, group, v1, embeddings, images, stt, tts or video.' }),
  model: t.String({ description: 'The catalogue id (`<connection>/<model>`).' }),
  apiKeyId: t.Union([t.String(), t.Null()]),
  responseId: t.Union([t.String(), t.Null()], { description: 'The AI turn the call belonged to.' }),
  assistantId: t.Union([t.String(), t.Null()], { description: 'The assistant that answered (a conversation with one, or a `/v1` model `assistant:<id>`); null otherwise. Kept when the assistant is later removed.' }),
  inputTokens: counts.inputTokens,
  outputTokens: counts.outputTokens,
  cachedTokens: counts.cachedTokens,
  reasoningTokens: counts.reasoningTokens,
  units: counts.units,
  estimated: t.Boolean({ description: 'Counted by Parley: the provider reported nothing.' }),
  credits: counts.credits,
});
