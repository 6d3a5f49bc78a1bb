import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { invalidInput } from '../http/errors';
import { iso } from '../ids';
import type { AppDeps } from '../deps';
import { listUsageRecords, type UsageGrouping } from './usage.store';
import { rangeOf, usageReport, UsageCallSchema, UsageRange, UsageReportSchema } from './usage.view';

// Usage metering read back (docs/usage.md): a user's own, and everyone's for admins.

const OWN_GROUPINGS = ['day', 'model', 'key', 'kind'] as const;
const ADMIN_GROUPINGS = ['day', 'model', 'key', 'kind', 'user'] as const;
const grouping = (values: readonly string[]) =>
  t.Optional(t.Union(values.map((v) => t.Literal(v)), { description: `What the usage is summed by: ${values.join(', ')}; default day.` }));

const CALLS_PAGE = 50;

function report(deps: AppDeps, input: { from?: string; to?: string; by?: string }, userId?: string) {
  const range = rangeOf(deps.now(), input);
  if ('error' in range) throw invalidInput([{ path: [range.path], message: range.error }]);
  return usageReport(deps.store, { ...range, userId, by: (input.by ?? 'day') as UsageGrouping });
}

export const usageOperations = [
  defineOperation({
    path: 'usage/getUsage',
    summary: "The caller's own usage of models, summed by day, model, API key or kind",
    description:
      'Every model call the caller\'s requests made (chat turns and each of their rounds, research rounds, group answers they asked for, embeddings of their documents and searches, images, speech) over a range of whole UTC days, ' +
      `default the last 30; at most 400 days (else 400). Tokens as the provider reported them, or counted by Parley (\`estimatedCalls\`). docs/usage.md.`,
    input: t.Object({ ...UsageRange, by: grouping(OWN_GROUPINGS) }),
    output: UsageReportSchema,
    handler: ({ input, user, deps }) => report(deps, input, user.id),
  }),
  defineOperation({
    path: 'usage/listCalls',
    summary: "The caller's model calls, newest first",
    description: `A page of at most \`limit\` (default ${CALLS_PAGE}) calls before \`before\` (a call's id, from the previous page's \`nextBefore\`); \`responseId\`: only the calls of that AI turn. docs/usage.md.`,
    input: t.Object({
      before: t.Optional(t.String({ maxLength: 100 })),
      limit: t.Optional(t.Integer({ minimum: 1, maximum: 200 })),
      responseId: t.Optional(t.String({ maxLength: 100 })),
    }),
    output: t.Object({ calls: t.Array(UsageCallSchema), nextBefore: t.Union([t.String(), t.Null()]) }),
    handler: async ({ input, user, deps }) => {
      const limit = input.limit ?? CALLS_PAGE;
      const rows = await deps.store.read((tx) => listUsageRecords(tx, user.id, { before: input.before, limit, responseId: input.responseId }));
      const calls = rows.map(({ creditsMicro, createdAt, userId: _u, connectionId: _c, ...r }) => ({ ...r, createdAt: iso(createdAt), credits: creditsMicro / 1_000_000 }));
      return { calls, nextBefore: rows.length === limit ? rows.at(-1)!.id : null };
    },
  }),
  defineOperation({
    path: 'admin/getUsage',
    admin: true,
    summary: "Everyone's usage of models, by user, API key, model, day or kind (as `parley usage`)",
    description:
      'Admins only: any other caller is answered 403. The same report as `usage/getUsage`, over every user, or one (`userId`); by `user`, each group is labelled with the e-mail, by `key` with the key\'s name and prefix. docs/usage.md.',
    input: t.Object({ ...UsageRange, by: grouping(ADMIN_GROUPINGS), userId: t.Optional(t.String({ minLength: 1, maxLength: 100 })) }),
    output: UsageReportSchema,
    errors: [403],
    handler: ({ input, deps }) => report(deps, input, input.userId),
  }),
];
