import { beforeEach, describe, expect, test, setDefaultTimeout } from 'bun:test';
import { bearer, createTestContext, SPEC_ERRORS, type TestContext, type TestUser } from './helpers';
import { revokeApiKey, revokeSession } from '../src/auth/auth.store';
import { DAY_MS } from '../src/time';
import { sharedFakeExpo } from './fakes/expo';
import { createExpoClient } from '../src/notifications/expo-client';
import { createExpoNotifier } from '../src/notifications/research-push';
import { listPushTokens, registerPushToken } from '../src/notifications/push-token.store';
import { testConfig } from '../src/config';

// Generous: the suite shares small machines with other work; these tests make many requests.
setDefaultTimeout(30_000);

const fake = sharedFakeExpo();
const pushConfig = { expoBaseUrl: fake.url, expoAccessToken: 'expo-secret', pushRetryMinMs: 5, pushReceiptDelayMs: 0, internalEmailDomain: 'parley.test' };

async function setup(users = [{ email: 'dev@parley.test' }, { email: 'ann@example.org' }]) {
  const config = testConfig(pushConfig);
  const push = await createExpoClient(config);
  const ctx = await createTestContext({ users, config: pushConfig, deps: { push } });
  return { ctx, push, dev: ctx.users[0]!, ann: ctx.users[1]! };
}

const tok = (tag: string, i = 0) => `ExponentPushToken[${tag}-${i}]`;

beforeEach(() => fake.reset());

describe('push tokens', () => {
  test('register (idempotent), unregister, validation, 401', async () => {
    const { ctx, dev, ann } = await setup();
    expect((await ctx.json('notifications/registerPushToken', { token: tok('ok'), platform: 'ios' }, dev)).body).toEqual({ success: true });
    expect((await ctx.json('notifications/registerPushToken', { token: tok('ok'), platform: 'ios' }, dev)).body).toEqual({ success: true });
    expect(await ctx.store.read((tx) => listPushTokens(tx, dev.user.id))).toEqual([tok('ok')]);
    // Someone else's token is left alone; the caller's is removed; both answer success.
    expect((await ctx.json('notifications/unregisterPushToken', { token: tok('ok') }, ann)).body).toEqual({ success: true });
    expect(await ctx.store.read((tx) => listPushTokens(tx, dev.user.id))).toEqual([tok('ok')]);
    expect((await ctx.json('notifications/unregisterPushToken', { token: tok('ok') }, dev)).body).toEqual({ success: true });
    expect(await ctx.store.read((tx) => listPushTokens(tx, dev.user.id))).toEqual([]);

    const bad = await ctx.json('notifications/registerPushToken', { token: 'not-a-token', platform: 'ios' }, dev);
    expect(bad.status).toBe(400);
    expect(bad.body.data.issues[0].path).toEqual(['token']);
    expect((await ctx.json('notifications/registerPushToken', { token: tok('ok'), platform: 'symbian' }, dev)).status).toBe(400);
    expect((await ctx.json('notifications/registerPushToken', { token: tok('ok'), platform: 'ios' })).body).toEqual(SPEC_ERRORS[401]);
    expect((await ctx.json('notifications/unregisterPushToken', { token: tok('ok') })).status).toBe(401);
  });
});

describe('push tokens: who holds a device', () => {
  // Both users internal, so each can ask for a test push to "all of my devices".
  const twoInternal = () => setup([{ email: 'dev@parley.test' }, { email: 'eve@parley.test' }]);
  const testPush = async (ctx: TestContext, as: Record<string, string> | TestUser) => {
    fake.reset();
    const report = (await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'completed' }, as)).body;
    return { tokenCount: report.tokenCount, delivered: fake.delivered.map((m) => m.to) };
  };

  test("another user's registration leaves a token with its signed-in owner; it moves once the owner signs out", async () => {
    const { ctx, dev, ann: eve } = await twoInternal();
    const phone = bearer(dev); // the app's session on the phone
    expect((await ctx.json('notifications/registerPushToken', { token: tok('phone'), platform: 'ios' }, phone)).body).toEqual({ success: true });

    // Eve learned the token: she is answered as for any registration, and gets nothing of it.
    expect((await ctx.json('notifications/registerPushToken', { token: tok('phone'), platform: 'android' }, eve)).body).toEqual({ success: true });
    expect(await ctx.store.read((tx) => listPushTokens(tx, dev.user.id))).toEqual([tok('phone')]);
    expect(await ctx.store.read((tx) => listPushTokens(tx, eve.user.id))).toEqual([]);
    expect(await testPush(ctx, eve)).toEqual({ tokenCount: 0, delivered: [] });
    expect(await testPush(ctx, dev)).toEqual({ tokenCount: 1, delivered: [tok('phone')] });

    // Dev signs out on the phone: his pushes stop there at once, and the next user signing in takes it.
    expect((await ctx.json('auth/signOut', {}, phone)).status).toBe(200);
    expect(await testPush(ctx, dev)).toEqual({ tokenCount: 0, delivered: [] });
    const eveOnPhone = bearer(eve);
    expect((await ctx.json('notifications/registerPushToken', { token: tok('phone'), platform: 'ios' }, eveOnPhone)).body).toEqual({ success: true });
    expect(await ctx.store.read((tx) => listPushTokens(tx, eve.user.id))).toEqual([tok('phone')]);
    expect(await testPush(ctx, eve)).toEqual({ tokenCount: 1, delivered: [tok('phone')] });
    // Dev, signed in elsewhere, cannot take it back while Eve's session holds it.
    expect((await ctx.json('notifications/registerPushToken', { token: tok('phone'), platform: 'ios' }, dev)).body).toEqual({ success: true });
    expect(await ctx.store.read((tx) => listPushTokens(tx, eve.user.id))).toEqual([tok('phone')]);
  });

  test('a token registered with an API key is held until that key is revoked; an expired session frees its tokens too', async () => {
    let now = Date.now();
    const { ctx, dev, ann: eve } = await twoInternal();
    ctx.deps.now = () => now;
    await ctx.json('notifications/registerPushToken', { token: tok('key'), platform: 'ios' }, dev);
    await ctx.json('notifications/registerPushToken', { token: tok('key'), platform: 'ios' }, eve);
    expect(await ctx.store.read((tx) => listPushTokens(tx, dev.user.id))).toEqual([tok('key')]);
    expect((await ctx.json('auth/revokeApiKey', { keyId: dev.keyId }, bearer(dev))).status).toBe(200);
    await ctx.json('notifications/registerPushToken', { token: tok('key'), platform: 'ios' }, eve);
    expect(await ctx.store.read((tx) => listPushTokens(tx, eve.user.id))).toEqual([tok('key')]);

    await ctx.json('notifications/registerPushToken', { token: tok('old'), platform: 'ios' }, bearer(dev));
    now += (ctx.deps.config.sessionTtlDays + 1) * DAY_MS; // the phone was not used for longer than a session lives
    await ctx.json('notifications/registerPushToken', { token: tok('old'), platform: 'ios' }, eve);
    expect(await ctx.store.read((tx) => listPushTokens(tx, eve.user.id))).toEqual([tok('key'), tok('old')]);
  });

  test('a token registered before Parley kept the credential stays while its owner has any live credential', async () => {
    const { ctx, dev, ann: eve } = await twoInternal();
    await ctx.store.write((tx) => registerPushToken(tx, dev.user.id, tok('legacy'), 'ios', Date.now())); // a row from before the holder columns
    await ctx.json('notifications/registerPushToken', { token: tok('legacy'), platform: 'ios' }, eve);
    expect(await ctx.store.read((tx) => listPushTokens(tx, dev.user.id))).toEqual([tok('legacy')]);
    expect(await testPush(ctx, dev)).toEqual({ tokenCount: 1, delivered: [tok('legacy')] });
    await ctx.store.write((tx) => revokeApiKey(tx, dev.keyId, undefined, Date.now()));
    await ctx.store.write((tx) => revokeSession(tx, dev.sessionId, Date.now()));
    await ctx.json('notifications/registerPushToken', { token: tok('legacy'), platform: 'ios' }, eve);
    expect(await ctx.store.read((tx) => listPushTokens(tx, eve.user.id))).toEqual([tok('legacy')]);
  });
});

describe('notifications/sendTestWebhookNotification', () => {
  test('sends the synthetic status push to every token, reads receipts, reports counts', async () => {
    const { ctx, dev } = await setup();
    for (const t of [tok('ok', 1), tok('ok', 2)]) await ctx.store.write((tx) => registerPushToken(tx, dev.user.id, t, 'ios', Date.now()));
    const res = await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'conv-1', status: 'completed' }, dev);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, tokenCount: 2, sent: 2, invalidTokens: 0, errors: 0, receiptIdsRequested: 2, receiptsMissing: 0 });
    expect(fake.delivered.map((m) => m.to).sort()).toEqual([tok('ok', 1), tok('ok', 2)]);
    const m = fake.delivered[0]!;
    expect(m.title).toBe('Deep research ready');
    expect(m.data).toMatchObject({ type: 'deep_research.status', conversationId: 'conv-1', status: 'completed', test: true });
    expect(fake.requests.map((r) => r.path)).toEqual(['/--/api/v2/push/send', '/--/api/v2/push/getReceipts']);
    expect(fake.requests[0]!.authorization).toBe('Bearer expo-secret');
  });

  test('more than 100 tokens go in several gzip chunks; ticket and receipt errors are counted; unregistered tokens removed', async () => {
    const { ctx, dev } = await setup();
    const tokens = [
      ...Array.from({ length: 230 }, (_, i) => tok('ok', i)),
      tok('gone', 1),
      tok('gone', 2),
      tok('toobig', 1),
      tok('lategone', 1),
      tok('lateerror', 1),
      tok('noreceipt', 1),
    ];
    for (const t of tokens) await ctx.store.write((tx) => registerPushToken(tx, dev.user.id, t, 'android', Date.now()));
    const res = await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'failed' }, dev);
    expect(res.body).toEqual({
      ok: false,
      tokenCount: 236,
      sent: 233, // 230 ok + lategone + lateerror + noreceipt
      invalidTokens: 3, // gone ×2 (tickets) + lategone (receipt)
      errors: 2, // toobig (ticket) + lateerror (receipt)
      receiptIdsRequested: 233,
      receiptsMissing: 1,
    });
    const sends = fake.requests.filter((r) => r.path.endsWith('/send'));
    expect(sends.map((r) => (r.body as unknown[]).length)).toEqual([100, 100, 36]);
    expect(sends.every((r) => r.gzip)).toBe(true);
    const left = await ctx.store.read((tx) => listPushTokens(tx, dev.user.id));
    expect(left).toHaveLength(233);
    for (const t of [tok('gone', 1), tok('gone', 2), tok('lategone', 1)]) expect(left).not.toContain(t);
  });

  test('a 429 from Expo is retried by the SDK', async () => {
    const { ctx, dev } = await setup();
    await ctx.store.write((tx) => registerPushToken(tx, dev.user.id, tok('ok'), 'ios', Date.now()));
    fake.rateLimitNext(2);
    const res = await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'queued' }, dev);
    expect(res.body).toMatchObject({ ok: true, sent: 1, errors: 0 });
    expect(fake.requests.filter((r) => r.path.endsWith('/send')).map((r) => r.status)).toEqual([429, 429, 200]);
  });

  test('rate limited beyond the retries: counted as errors, not a crash', async () => {
    const { ctx, dev } = await setup();
    await ctx.store.write((tx) => registerPushToken(tx, dev.user.id, tok('ok'), 'ios', Date.now()));
    fake.rateLimitNext(10);
    const res = await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'queued' }, dev);
    expect(res.body).toEqual({ ok: false, tokenCount: 1, sent: 0, invalidTokens: 0, errors: 1, receiptIdsRequested: 0, receiptsMissing: 0 });
  });

  test('no tokens: ok false, nothing sent', async () => {
    const { ctx, dev } = await setup();
    const res = await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'in_progress' }, dev);
    expect(res.body).toEqual({ ok: false, tokenCount: 0, sent: 0, invalidTokens: 0, errors: 0, receiptIdsRequested: 0, receiptsMissing: 0 });
    expect(fake.requests).toHaveLength(0);
  });

  test('403 outside the internal domain and when no domain is configured; 400 bad status; 401 anonymous', async () => {
    const { ctx, dev, ann } = await setup();
    expect(await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'completed' }, ann)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    const bad = await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'done' }, dev);
    expect(bad.status).toBe(400);
    expect(bad.body.data.issues[0].path).toEqual(['status']);
    expect((await ctx.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'completed' })).body).toEqual(SPEC_ERRORS[401]);
    // A look-alike domain is not the internal one.
    const noDomain = await createTestContext({ users: [{ email: 'dev@parley.test' }, { email: 'x@evilparley.test' }], config: { ...pushConfig, internalEmailDomain: undefined } });
    expect((await noDomain.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'completed' }, noDomain.users[0])).status).toBe(403);
    const lookalike = await createTestContext({ users: [{ email: 'x@evilparley.test' }], config: pushConfig });
    expect((await lookalike.json('notifications/sendTestWebhookNotification', { conversationId: 'c', status: 'completed' }, lookalike.users[0])).status).toBe(403);
  });
});

describe('the research notifier', () => {
  test('researchStatus pushes to the user\'s devices, then checks receipts in the background', async () => {
    const { ctx, push, dev } = await setup();
    await ctx.store.write((tx) => registerPushToken(tx, dev.user.id, tok('ok'), 'ios', Date.now()));
    await ctx.store.write((tx) => registerPushToken(tx, dev.user.id, tok('lategone'), 'ios', Date.now()));
    const notifier = createExpoNotifier({ store: ctx.deps.store, log: ctx.deps.log, push, config: { pushReceiptDelayMs: 0 } });
    await notifier.researchStatus({ userId: dev.user.id, conversationId: 'conv-9', responseId: 'resp-9', status: 'completed', title: 'Solar panels' });
    expect(fake.delivered).toHaveLength(2);
    expect(fake.delivered[0]).toMatchObject({ title: 'Deep research ready', body: 'Solar panels', data: { conversationId: 'conv-9', responseId: 'resp-9', test: false } });
    for (let i = 0; i < 50 && (await ctx.store.read((tx) => listPushTokens(tx, dev.user.id))).length > 1; i++) await Bun.sleep(10);
    expect(await ctx.store.read((tx) => listPushTokens(tx, dev.user.id))).toEqual([tok('ok')]);
  });

  test('researchStatus never throws, even when Expo is unreachable', async () => {
    const { ctx, dev } = await setup();
    await ctx.store.write((tx) => registerPushToken(tx, dev.user.id, tok('ok'), 'ios', Date.now()));
    const broken = { chunkPushNotifications: (m: any) => [m], sendPushNotificationsAsync: async () => { throw new Error('ECONNREFUSED'); } } as any;
    const notifier = createExpoNotifier({ store: ctx.deps.store, log: ctx.deps.log, push: broken, config: { pushReceiptDelayMs: 0 } });
    await notifier.researchStatus({ userId: dev.user.id, conversationId: 'c', status: 'failed' });
  });
});
