import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, forbidden } from '../http/errors';
import { ACCOUNT_TYPES, updateUser } from './account.store';
import { preferencesOf, accountTypeOf, subscriptionOf, PreferencesSchema, AccountTypeSchema, SubscriptionSchema } from './account.view';

const Empty = t.Object({});

export const accountOperations = [
  defineOperation({
    path: 'preferences/get',
    summary: "The caller's preferences",
    input: Empty,
    output: PreferencesSchema,
    handler: ({ user }) => preferencesOf(user),
  }),
  defineOperation({
    path: 'preferences/update',
    summary: "Change some of the caller's preferences",
    description: 'Fields left out keep their value. Answers the preferences after the change.',
    input: t.Object({ enableMemories: t.Optional(t.Boolean()), showMemoryToolOutput: t.Optional(t.Boolean()) }),
    output: PreferencesSchema,
    handler: async ({ user, input, deps }) => preferencesOf((await deps.store.write((tx) => updateUser(tx, user.id, input, deps.now())))!),
  }),
  defineOperation({
    path: 'preferences/getAccountType',
    summary: "The caller's account type and whether its selection is locked",
    input: Empty,
    output: AccountTypeSchema,
    handler: ({ user }) => accountTypeOf(user),
  }),
  defineOperation({
    path: 'preferences/setAccountType',
    summary: "Choose the caller's account type",
    description: 'Answers 403 when the account type is locked (an admin locks it with `parley user set --locked`).',
    input: t.Object({ accountType: t.Union(ACCOUNT_TYPES.map((a) => t.Literal(a))) }),
    output: AccountTypeSchema,
    errors: [403],
    handler: async ({ user, input, deps }) => {
      if (user.isLocked) throw forbidden();
      const updated = await deps.store.write((tx) => updateUser(tx, user.id, { accountType: input.accountType }, deps.now()));
      if (!updated) throw new AppError('INTERNAL_SERVER_ERROR');
      return accountTypeOf(updated);
    },
  }),
  defineOperation({
    path: 'subscription/getStatus',
    summary: "The caller's subscription status",
    input: Empty,
    output: SubscriptionSchema,
    handler: ({ user, deps }) => subscriptionOf(user, deps.now()),
  }),
];
