import { describe, expect, test, setDefaultTimeout } from 'bun:test';
import { createTestContext } from './helpers';
import { grantCredits, spendCredits, listLedger } from '../src/credits/credit.store';

// Generous: the suite shares small machines with other work; these tests make many requests.
setDefaultTimeout(30_000);

const dev = async () => await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { env: 'development', adRewardMaxAmount: 50 } });

describe('credits', () => {
  test('grantAdReward grants in development, once per adId per user', async () => {
    const ctx = await dev();
    const [ann, bob] = ctx.users as [any, any];
    expect((await ctx.json('credits/getBalance', {}, ann)).body).toEqual({ bonusBalance: 0 });
    expect((await ctx.json('credits/grantAdReward', { adId: 'ad-1', amount: 10 }, ann)).body).toEqual({ granted: true, bonusBalance: 10 });
    expect((await ctx.json('credits/grantAdReward', { adId: 'ad-2', amount: 5 }, ann)).body).toEqual({ granted: true, bonusBalance: 15 });
    expect((await ctx.json('credits/grantAdReward', { adId: 'ad-1', amount: 10 }, ann)).body).toEqual({ granted: false, bonusBalance: 15 });
    // The same ad id is another user's own reward.
    expect((await ctx.json('credits/grantAdReward', { adId: 'ad-1', amount: 7 }, bob)).body).toEqual({ granted: true, bonusBalance: 7 });
    expect((await ctx.json('credits/getBalance', {}, ann)).body).toEqual({ bonusBalance: 15 });
    expect((await ctx.json('auth/getSession', {}, ann)).body.user.bonusBalance).toBe(15);
    const ledger = await ctx.store.read((tx) => listLedger(tx, ann.user.id));
    expect(ledger.map((e) => [e.amount, e.reason, e.adId])).toEqual([
      [10, 'ad_reward', 'ad-1'],
      [5, 'ad_reward', 'ad-2'],
    ]);
  });

  test('in production grantAdReward answers granted:false and grants nothing', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    await ctx.store.write((tx) => grantCredits(tx, { userId: ann.user.id, amount: 3, reason: 'welcome' }, Date.now()));
    expect((await ctx.json('credits/grantAdReward', { adId: 'ad-1', amount: 10 }, ann)).body).toEqual({ granted: false, bonusBalance: 3 });
    expect(await ctx.store.read((tx) => listLedger(tx, ann.user.id))).toHaveLength(1);
  });

  test('amount must be a positive integer up to the configured bound (400), 401 anonymous', async () => {
    const ctx = await dev();
    const ann = ctx.users[0]!;
    for (const amount of [0, -1, 1.5, 51, 1e9]) {
      const r = await ctx.json('credits/grantAdReward', { adId: `ad-${amount}`, amount }, ann);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'BAD_REQUEST', data: { issues: [{ path: ['amount'] }] } });
    }
    expect((await ctx.json('credits/grantAdReward', { adId: 'x', amount: '5' }, ann)).status).toBe(400);
    expect((await ctx.json('credits/grantAdReward', { adId: 'x', amount: 50 }, ann)).body.granted).toBe(true);
    expect((await ctx.json('credits/getBalance', {}, ann)).body).toEqual({ bonusBalance: 50 });
    expect((await ctx.json('credits/grantAdReward', { adId: 'y', amount: 5 })).status).toBe(401);
    expect((await ctx.json('credits/getBalance', {})).status).toBe(401);
  });

  test('concurrent grants never lose an update', async () => {
    const ctx = await dev();
    const ann = ctx.users[0]!;
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => ctx.json('credits/grantAdReward', { adId: `ad-${i}`, amount: 2 }, ann)));
    expect(results.every((r) => r.body.granted)).toBe(true);
    expect((await ctx.json('credits/getBalance', {}, ann)).body).toEqual({ bonusBalance: 80 });
    // Every grant saw a distinct balance: they were serialised, none read a stale sum.
    expect(new Set(results.map((r) => r.body.bonusBalance)).size).toBe(40);
  });

  test('the balance never goes negative: spends beyond it are refused', async () => {
    const ctx = await dev();
    const id = ctx.users[0]!.user.id;
    await ctx.store.write((tx) => grantCredits(tx, { userId: id, amount: 5, reason: 'test' }, Date.now()));
    expect(await ctx.store.write((tx) => spendCredits(tx, { userId: id, amount: 3, reason: 'chat' }, Date.now()))).toEqual({ spent: true, bonusBalance: 2 });
    expect(await ctx.store.write((tx) => spendCredits(tx, { userId: id, amount: 3, reason: 'chat' }, Date.now()))).toEqual({ spent: false, bonusBalance: 2 });
    await expect(ctx.store.write((tx) => grantCredits(tx, { userId: id, amount: -1, reason: 'x' }, Date.now()))).rejects.toThrow();
  });
});
