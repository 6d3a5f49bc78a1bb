import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { forbidden } from '../http/errors';
import { newId } from '../ids';
import { EXPO_PUSH_TOKEN_PATTERN, PUSH_PLATFORMS, unregisterPushToken } from './push-token.store';
import { claimPushToken } from './push-token-holder';
import { RESEARCH_STATUSES, sendTestResearchPush } from './research-push';

const Report = t.Object({
  ok: t.Boolean(),
  tokenCount: t.Number(),
  sent: t.Number(),
  invalidTokens: t.Number(),
  errors: t.Number(),
  receiptIdsRequested: t.Number(),
  receiptsMissing: t.Number(),
});

export const notificationOperations = [
  defineOperation({
    path: 'notifications/registerPushToken',
    summary: "Register this device's Expo push token for the caller",
    description:
      "Idempotent. The token is held by the calling credential (the app's session on that device). A token another user registered moves to the caller only once the credential that registered it has ended (signed out, revoked, expired); until then it stays with that user, and the answer is the same `{success: true}`. Pushes go only to tokens whose credential is live. " +
      "A user keeps at most PARLEY_PUSH_TOKENS_MAX_PER_USER tokens: registering one more drops the user's least recently registered one. Not an Expo push token: 400.",
    input: t.Object({ token: t.String({ maxLength: 512, pattern: EXPO_PUSH_TOKEN_PATTERN }), platform: t.Union(PUSH_PLATFORMS.map((p) => t.Literal(p))) }),
    output: t.Object({ success: t.Boolean() }),
    rateLimit: 'write',
    handler: async ({ input, user, principal, deps }) => {
      const keep = deps.config.pushTokensMaxPerUser;
      if (!(await deps.store.write((tx) => claimPushToken(tx, user.id, principal.credential, input.token, input.platform, deps.now(), keep))))
        deps.log.warn('push token not moved: another user is signed in with it', { userId: user.id });
      return { success: true };
    },
  }),
  defineOperation({
    path: 'notifications/unregisterPushToken',
    summary: "Stop pushing to one of the caller's devices",
    description: 'Idempotent: answers `{success: true}` whether or not the token was registered; another user\'s token is left alone.',
    input: t.Object({ token: t.String({ maxLength: 512 }) }),
    output: t.Object({ success: t.Boolean() }),
    handler: async ({ input, user, deps }) => {
      await deps.store.read((tx) => unregisterPushToken(tx, user.id, input.token));
      return { success: true };
    },
  }),
  defineOperation({
    path: 'notifications/sendTestWebhookNotification',
    summary: 'Internal: send a synthetic deep-research status push to all of the caller\'s devices',
    description:
      'Only for users whose e-mail domain is `PARLEY_INTERNAL_EMAIL_DOMAIN` (403 for everyone else, and for everyone when it is unset). ' +
      '`status` is one of queued, in_progress, completed, failed, cancelled. Sends the push, waits `PARLEY_PUSH_RECEIPT_DELAY_MS`, ' +
      'asks Expo for the receipts and reports the counts. Tokens Expo reports as DeviceNotRegistered are removed.',
    input: t.Object({ conversationId: t.String({ maxLength: 200 }), status: t.Union(RESEARCH_STATUSES.map((s) => t.Literal(s))) }),
    output: Report,
    errors: [403, 500],
    handler: async ({ input, user, deps }) => {
      const domain = deps.config.internalEmailDomain;
      if (!domain || user.email.slice(user.email.lastIndexOf('@') + 1).toLowerCase() !== domain) throw forbidden();
      return sendTestResearchPush(
        { store: deps.store, log: deps.log, push: deps.push, receiptDelayMs: deps.config.pushReceiptDelayMs },
        { userId: user.id, conversationId: input.conversationId, responseId: `test_${newId()}`, status: input.status, title: 'Test notification' },
      );
    },
  }),
];
