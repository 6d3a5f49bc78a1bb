import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { invalidInput } from '../http/errors';
import { bonusBalanceOf, grantCredits } from './credit.store';

const Balance = t.Object({ bonusBalance: t.Number() });

export const creditOperations = [
  defineOperation({
    path: 'credits/getBalance',
    summary: "The caller's bonus credit balance",
    description: 'The sum of the caller\'s credit ledger (grants minus spends); never negative.',
    input: t.Object({}),
    output: Balance,
    handler: async ({ user, deps }) => ({ bonusBalance: await deps.store.read((tx) => bonusBalanceOf(tx, user.id)) }),
  }),
  defineOperation({
    path: 'credits/grantAdReward',
    summary: 'Development only: grant bonus credits for a watched rewarded ad',
    description:
      'Works only when the server runs with `PARLEY_ENV=development`; in production it answers `granted: false` and grants nothing ' +
      '(production grants come from server-side verification callbacks). Each `adId` grants once per user: a repeat answers ' +
      '`granted: false` with the balance unchanged. `amount` must be a positive integer no larger than `PARLEY_AD_REWARD_MAX_AMOUNT`, else 400.',
    // The largest amount is a setting, so the handler checks that bound; the schema says the rest.
    input: t.Object({ adId: t.String({ minLength: 1, maxLength: 200 }), amount: t.Integer({ minimum: 1 }) }),
    output: t.Object({ granted: t.Boolean(), bonusBalance: t.Number() }),
    // A ledger row per new `adId`, in development only (production grants nothing here): the rate
    // limit is its bound, as a test server needs no cap.
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const max = deps.config.adRewardMaxAmount;
      if (input.amount > max) throw invalidInput([{ path: ['amount'], message: `must be at most ${max}` }]);
      if (deps.config.env !== 'development') return { granted: false, bonusBalance: await deps.store.read((tx) => bonusBalanceOf(tx, user.id)) };
      return deps.store.write((tx) => grantCredits(tx, { userId: user.id, amount: input.amount, reason: 'ad_reward', adId: input.adId }, deps.now()));
    },
  }),
];
