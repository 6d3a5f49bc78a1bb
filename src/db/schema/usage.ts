import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';
import { apiKeys, users } from './users';

/**
 * Usage metering (docs/usage.md). One row a call to a model: a chat turn's upstream round, a
 * research round, a group answer, a `/v1` call, an embeddings request, an image, a transcription
 * or a spoken text, with what the provider reported (or Parley counted: `estimated`) and the
 * credits it cost. Credits are kept in millionths (`credits_micro`): a call of a few hundred
 * tokens costs a fraction of one.
 */
export const usageRecords = sqliteTable(
  'usage_records',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The API key the request came with, when it came with one. */
    apiKeyId: text('api_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
    /** The connection that answered; no foreign key: usage stays when a connection goes. */
    connectionId: text('connection_id'),
    /** The catalogue id (`<connection>/<model>`). */
    model: text('model').notNull(),
    /** The assistant that answered, once assistants exist. */
    assistantId: text('assistant_id'),
    /** chat | research | group | title | v1 | embeddings | images | stt | tts */
    kind: text('kind').notNull(),
    inputTokens: integer('input_tokens').notNull(),
    outputTokens: integer('output_tokens').notNull(),
    cachedTokens: integer('cached_tokens').notNull(),
    reasoningTokens: integer('reasoning_tokens').notNull(),
    /** Seconds transcribed (rounded up), characters spoken, images made. */
    units: integer('units').notNull(),
    /** Credits charged, in millionths of a credit. */
    creditsMicro: integer('credits_micro').notNull(),
    /** Parley counted: the provider reported nothing. */
    estimated: integer('estimated', { mode: 'boolean' }).notNull(),
    /** The AI turn the call belonged to, when it was one. */
    responseId: text('response_id'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('usage_records_user_idx').on(t.userId, t.createdAt), index('usage_records_time_idx').on(t.createdAt)],
);

/**
 * What a user used a day (UTC), for the allowances: the tokens of the token kinds, the research
 * runs begun and the images made. Summed over a period's days, so a check reads a month in at
 * most 31 rows whatever the calls were.
 */
export const usageDays = sqliteTable(
  'usage_days',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** `YYYY-MM-DD`, UTC. */
    day: text('day').notNull(),
    tokens: integer('tokens').notNull(),
    researchRuns: integer('research_runs').notNull(),
    images: integer('images').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day] })],
);

/**
 * What calls running now hold of a user's allowance and credits (reserved before the call,
 * settled after it): concurrent calls cannot together spend more than there is. A row a crash left
 * counts until it expires.
 */
export const usageReservations = sqliteTable(
  'usage_reservations',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokens: integer('tokens').notNull(),
    images: integer('images').notNull(),
    creditsMicro: integer('credits_micro').notNull(),
    /** A research run past its allowance: every token of it is paid with credits. */
    paid: integer('paid', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('usage_reservations_user_idx').on(t.userId, t.expiresAt)],
);

/**
 * A subscription tier's allowances per period (`users.subscription_tier` names it). Null: no
 * limit. A tier without a row has none at all (`FREE` until an admin gives it some).
 */
export const usageTiers = sqliteTable('usage_tiers', {
  name: text('name').primaryKey(),
  /** day | week (from Monday) | month, in UTC. */
  period: text('period').notNull(),
  tokens: integer('tokens'),
  researchRuns: integer('research_runs'),
  images: integer('images'),
  updatedAt: integer('updated_at').notNull(),
});

/**
 * A model's price in credits, in millionths: per million input and output tokens, per unit
 * (image, second, character) and per request. A model without a row cannot be paid for with
 * credits once an allowance is used up.
 */
export const usagePrices = sqliteTable('usage_prices', {
  /** The catalogue id (`<connection>/<model>`). */
  model: text('model').primaryKey(),
  inputMicro: integer('input_micro').notNull(),
  outputMicro: integer('output_micro').notNull(),
  unitMicro: integer('unit_micro').notNull(),
  requestMicro: integer('request_micro').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

export type UsageRecord = typeof usageRecords.$inferSelect;
export type UsageTierRow = typeof usageTiers.$inferSelect;
export type UsagePriceRow = typeof usagePrices.$inferSelect;
export type UsageReservationRow = typeof usageReservations.$inferSelect;
