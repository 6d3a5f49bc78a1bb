import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, until, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf, type Frame } from './sse';
import { startFakeOpenAI } from './fakes/openai';
import { updateUser } from '../src/account/account.store';
import { grantCredits } from '../src/credits/credit.store';
import { listUsageRecords } from '../src/usage/usage.store';
import { createMemoryBus } from '../src/pubsub/bus';
import type { AppDeps } from '../src/deps';

// Quotas (docs/usage.md, "Quotas"): a tier's allowance, then the user's bonus credits at the
// model's price, then a refusal before anything goes upstream — on either store.

setDefaultTimeout(60_000);

const openai = startFakeOpenAI();
afterAll(() => openai.stop());
beforeEach(() => {
  openai.eventDelayMs = 0;
  openai.requests.length = 0;
  openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }], usage: { prompt_tokens: 600, completion_tokens: 10, total_tokens: 610 } });
});

const upstreamCalls = () => openai.requests.filter((r) => r.path === 'POST /v1/chat/completions').length;

async function setup(deps: Partial<AppDeps> = {}) {
  const ctx = await createTestContext({
    deps,
    users: [{ email: 'admin@example.org' }, { email: 'ann@example.org' }, { email: 'bob@example.org' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined, researchMaxPerUser: 40, researchMaxTotal: 40, maxStreamsPerUser: 40, usageEstimateOutputTokens: 50 },
  });
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann, bob };
}

const turn = async (ctx: TestContext, as: TestUser): Promise<Frame[]> => {
  const res = await ctx.call('chat/stream', { message: 'Hi' }, as);
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return readFrames(res);
};
const ended = (frames: Frame[]) => typesOf(frames).at(-1);
const errorOf = (frames: Frame[]) => frames.find((f) => f.data.type === 'error')?.data.message as string | undefined;
const balance = async (ctx: TestContext, as: TestUser) => (await ctx.json('credits/getBalance', {}, as)).body.bonusBalance as number;
/** The catalogue id of the chat model, as usage records and prices name it. */
const modelOf = async (ctx: TestContext, as: TestUser) => (await ctx.store.read((tx) => listUsageRecords(tx, as.user.id, { limit: 1 })))[0]!.model;

describe('quotas', () => {
  test('a tier\'s token allowance: used, then a turn refused before it goes upstream, saying which limit and when it resets', async () => {
    const { ctx, admin, ann, bob } = await setup();
    const set = await ctx.json('admin/setUsageTier', { name: 'FREE', period: 'day', tokens: 1000 }, admin);
    expect(set.status).toBe(200);
    expect(set.body.tiers).toEqual([{ name: 'FREE', period: 'day', tokens: 1000, researchRuns: null, images: null, updatedAt: expect.any(String) }]);
    expect(ended(await turn(ctx, ann))).toBe('done');
    expect(ended(await turn(ctx, ann))).toBe('done');
    await until(async () => (await ctx.json('usage/getUsage', {}, ann)).body.totals.calls === 2, 'two calls recorded');
    const before = upstreamCalls();
    const refused = await turn(ctx, ann);
    expect(ended(refused)).toBe('error');
    const tomorrow = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1)).toISOString().slice(0, 16).replace('T', ' ');
    expect(errorOf(refused)).toBe(`Your FREE allowance of 1,000 tokens a day is used up, and the model ${await modelOf(ctx, ann)} cannot be paid for with bonus credits. It resets at ${tomorrow} UTC.`);
    expect(upstreamCalls()).toBe(before);
    // Bob's allowance is his own; another tier limits nothing.
    expect(ended(await turn(ctx, bob))).toBe('done');
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { subscriptionTier: 'PRO' }, Date.now()));
    expect(ended(await turn(ctx, ann))).toBe('done');
    // Removed: FREE limits nothing any more.
    expect((await ctx.json('admin/removeUsageTier', { name: 'FREE' }, admin)).body.tiers).toEqual([]);
    expect((await ctx.json('admin/removeUsageTier', { name: 'FREE' }, admin)).status).toBe(404);
  });

  test('past the allowance a turn spends bonus credits at the model\'s price; with too few, refused', async () => {
    const { ctx, admin, ann } = await setup();
    expect(ended(await turn(ctx, ann))).toBe('done');
    await until(async () => (await ctx.json('usage/getUsage', {}, ann)).body.totals.calls === 1, 'a call recorded');
    const model = await modelOf(ctx, ann);
    await ctx.json('admin/setUsageTier', { name: 'FREE', period: 'month', tokens: 0 }, admin);
    const priced = await ctx.json('admin/setModelPrice', { model, perRequest: 1, inputPerMillion: 1000 }, admin);
    expect(priced.body.prices).toEqual([{ model, inputPerMillion: 1000, outputPerMillion: 0, perUnit: 0, perRequest: 1, updatedAt: expect.any(String) }]);
    await ctx.store.write((tx) => grantCredits(tx, { userId: ann.user.id, amount: 4, reason: 'test' }, Date.now()));
    // Each turn: 1 credit a call and 600 input tokens at 1,000 a million (0.6).
    expect(ended(await turn(ctx, ann))).toBe('done');
    await until(async () => (await balance(ctx, ann)) < 4, 'the turn charged');
    expect(await balance(ctx, ann)).toBeCloseTo(2.4, 6);
    expect(ended(await turn(ctx, ann))).toBe('done');
    await until(async () => (await balance(ctx, ann)) < 2.4, 'the second turn charged');
    expect(await balance(ctx, ann)).toBeCloseTo(0.8, 6);
    const refused = await turn(ctx, ann);
    expect(errorOf(refused)).toMatch(/^Your FREE allowance of 0 tokens a month is used up, and your bonus credits \(0\.8\) do not cover this request \(about 1\.\d+\)\. It resets at \d{4}-\d{2}-01 00:00 UTC\.$/);
    const calls = (await ctx.json('usage/listCalls', {}, ann)).body.calls;
    expect(calls.map((c: any) => c.credits)).toEqual([1.6, 1.6, 0]);
  });

  /**
   * 20 turns at once of a user with credits for 10 (a credit a call, no allowance), spread over
   * `instances` (apps on the database of the first): exactly 10 answered, the other 10 refused
   * with the quota's sentence before anything goes upstream, the balance spent to 0 and never below;
   * then credits for 10 again, `ROUNDS` times.
   */
  const ROUNDS = 3;
  async function twentyTurnsForTen(ctx: TestContext, admin: TestUser, ann: TestUser, instances: TestContext[]) {
    expect(ended(await turn(ctx, ann))).toBe('done');
    await until(async () => (await ctx.json('usage/getUsage', {}, ann)).body.totals.calls === 1, 'a call recorded');
    const model = await modelOf(ctx, ann);
    await ctx.json('admin/setUsageTier', { name: 'FREE', period: 'day', tokens: 0 }, admin);
    await ctx.json('admin/setModelPrice', { model, perRequest: 1 }, admin);
    openai.eventDelayMs = 30;
    const sentence = /^Your FREE allowance of 0 tokens a day is used up, and your bonus credits \([\d.]+\) do not cover this request \(about 1\)\. It resets at \d{4}-\d{2}-\d{2} 00:00 UTC\.$/;
    // A few bursts: an overspend is a race, which one burst may happen to miss.
    for (let round = 1; round <= ROUNDS; round++) {
      await ctx.store.write((tx) => grantCredits(tx, { userId: ann.user.id, amount: 10, reason: 'test' }, Date.now()));
      const before = upstreamCalls();
      const all = await Promise.all(Array.from({ length: 20 }, (_, i) => turn(instances[i % instances.length]!, ann)));
      const done = all.filter((f) => ended(f) === 'done').length;
      const refused = all.filter((f) => ended(f) === 'error' && sentence.test(errorOf(f) ?? '')).length;
      expect({ round, done, refused }).toEqual({ round, done: 10, refused: 10 });
      expect(upstreamCalls() - before).toBe(10);
      await until(async () => (await balance(ctx, ann)) === 0, 'every turn charged');
      // Charged in full, never overdrawn, whichever instance reads it.
      for (const i of instances) expect(await balance(i, ann)).toBe(0);
    }
    const charged = (await ctx.json('usage/listCalls', { limit: 200 }, ann)).body.calls.filter((c: any) => c.credits > 0);
    expect(charged.map((c: any) => c.credits)).toEqual(Array(10 * ROUNDS).fill(1));
  }

  test('20 turns at once with credits for 10: exactly 10 run, the balance is never overdrawn', async () => {
    const { ctx, admin, ann } = await setup();
    await twentyTurnsForTen(ctx, admin, ann, [ctx]);
  });

  test('the same across two instances on one database (10 turns through each): exactly 10 run between them', async () => {
    // Two apps on one database stand for two instances (on PostgreSQL each with its own pool, so
    // the lock on the user is the database's); they share a bus as a cluster's instances do, which
    // is how the second hears of the admin's new tier and price.
    const bus = createMemoryBus();
    const { ctx, admin, ann } = await setup({ bus, instanceId: 'instance-a' });
    const other = await createTestContext({ sameDatabaseAs: ctx, config: ctx.deps.config, deps: { bus, instanceId: 'instance-b' } });
    await twentyTurnsForTen(ctx, admin, ann, [ctx, other]);
  });

  test('admin/getUsageQuotas and the inputs checked', async () => {
    const { ctx, admin } = await setup();
    expect((await ctx.json('admin/getUsageQuotas', {}, admin)).body).toEqual({ tiers: [], prices: [] });
    expect((await ctx.json('admin/setUsageTier', { name: 'FREE', period: 'year' }, admin)).status).toBe(400);
    expect((await ctx.json('admin/setUsageTier', { name: 'FREE', period: 'day', tokens: -1 }, admin)).status).toBe(400);
    expect((await ctx.json('admin/setModelPrice', { model: 'a/b', perRequest: -1 }, admin)).status).toBe(400);
    expect((await ctx.json('admin/removeModelPrice', { model: 'a/b' }, admin)).status).toBe(404);
  });
});
