import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { forbidden } from '../http/errors';
import { iso, isoOrNull } from '../ids';
import { UserSchema, userWithAdminView } from '../account/account.view';
import type { ApiKey } from '../db/schema';
import { countActiveApiKeys, createApiKey, listApiKeys, revokeApiKey, revokeSession } from './auth.store';
import { checkCap } from '../http/user-caps';
import { clearedSessionCookie } from './authenticate';
import { bonusBalanceOf } from '../credits/credit.store';

export const ApiKeySchema = t.Object({
  keyId: t.String(),
  name: t.String(),
  prefix: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  lastUsedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  revokedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
});

export const apiKeyView = (k: ApiKey) => ({
  keyId: k.id,
  name: k.name,
  prefix: k.prefix,
  createdAt: iso(k.createdAt),
  lastUsedAt: isoOrNull(k.lastUsedAt),
  revokedAt: isoOrNull(k.revokedAt),
});

export const authOperations = [
  defineOperation({
    path: 'auth/createApiKey',
    summary: 'Create an API key for the caller',
    description: 'The key is shown in this answer only; Parley keeps a hash of it. A caller who holds PARLEY_API_KEYS_MAX_PER_USER keys that are not revoked: 409.',
    input: t.Object({ name: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.Object({ keyId: t.String(), key: t.String(), name: t.String(), prefix: t.String(), createdAt: t.String({ format: 'date-time' }) }),
    errors: [409],
    rateLimit: 'write',
    handler: async ({ user, input, deps }) => {
      const max = deps.config.apiKeysMaxPerUser;
      const { row, key } = await deps.store.write(function* (tx) {
        yield* checkCap(tx, 'apiKeysMaxPerUser', user.id, max, countActiveApiKeys(tx, user.id), (n) => [`You hold ${n} API keys`, 'Revoke one you no longer use first (auth/revokeApiKey).']);
        return yield* createApiKey(tx, user.id, input.name, deps.now());
      });
      return { keyId: row.id, key, name: row.name, prefix: row.prefix, createdAt: iso(row.createdAt) };
    },
  }),
  defineOperation({
    path: 'auth/listApiKeys',
    summary: "The caller's API keys, newest first (revoked ones included, never the keys themselves)",
    input: t.Object({}),
    output: t.Object({ keys: t.Array(ApiKeySchema) }),
    handler: async ({ user, deps }) => ({ keys: (await deps.store.read((tx) => listApiKeys(tx, user.id))).map(apiKeyView) }),
  }),
  defineOperation({
    path: 'auth/revokeApiKey',
    summary: 'Revoke one of the caller\'s API keys',
    description: 'A key the caller does not own, or that does not exist, answers 403. Revoking twice succeeds.',
    input: t.Object({ keyId: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403],
    handler: async ({ user, input, deps }) => {
      if (!(await deps.store.write((tx) => revokeApiKey(tx, input.keyId, user.id, deps.now())))) throw forbidden();
      return { success: true };
    },
  }),
  defineOperation({
    path: 'auth/getSession',
    summary: 'The signed-in user and the credential used',
    input: t.Object({}),
    output: t.Object({ user: UserSchema, credential: t.Object({ kind: t.String(), id: t.String() }) }),
    handler: async ({ user, principal, deps }) => ({
      user: { ...userWithAdminView(user, deps.now()), bonusBalance: await deps.store.read((tx) => bonusBalanceOf(tx, user.id)) },
      credential:
        principal.credential.kind === 'session'
          ? { kind: 'session', id: principal.credential.sessionId }
          : { kind: 'apiKey', id: principal.credential.keyId },
    }),
  }),
  defineOperation({
    path: 'auth/signOut',
    summary: 'End the current session and clear the session cookie',
    description: 'With an API key there is no session to end: the answer is still `{success: true}` and the key stays valid.',
    input: t.Object({}),
    output: t.Object({ success: t.Boolean() }),
    handler: async ({ principal, deps, responseHeaders }) => {
      const credential = principal.credential;
      if (credential.kind === 'session') await deps.store.write((tx) => revokeSession(tx, credential.sessionId, deps.now()));
      responseHeaders['set-cookie'] = clearedSessionCookie(deps.config.cookieSecure);
      return { success: true };
    },
  }),
];
