import { describe, expect, test } from 'bun:test';
import { createTestContext, SPEC_ERRORS } from './helpers';
import { updateUser } from '../src/account/account.store';

describe('account', () => {
  test('preferences/get and preferences/update', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    expect((await ctx.json('preferences/get', undefined, ann)).body).toEqual({ enableMemories: false, showMemoryToolOutput: false });
    expect((await ctx.json('preferences/update', { enableMemories: true }, ann)).body).toEqual({ enableMemories: true, showMemoryToolOutput: false });
    expect((await ctx.json('preferences/get', {}, ann)).body).toEqual({ enableMemories: true, showMemoryToolOutput: false });
    expect((await ctx.json('preferences/update', { enableMemories: 'yes' }, ann)).status).toBe(400);
  });

  test('account type: default GENERAL, settable, 403 when locked', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    expect((await ctx.json('preferences/getAccountType', {}, ann)).body).toEqual({ accountType: 'GENERAL', isLocked: false });
    expect((await ctx.json('preferences/setAccountType', { accountType: 'STUDENT' }, ann)).body).toEqual({ accountType: 'STUDENT', isLocked: false });
    expect((await ctx.json('preferences/setAccountType', { accountType: 'WIZARD' }, ann)).status).toBe(400);
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { isLocked: true }, Date.now()));
    const locked = await ctx.json('preferences/setAccountType', { accountType: 'GENERAL' }, ann);
    expect(locked.status).toBe(403);
    expect(locked.body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('preferences/getAccountType', {}, ann)).body).toEqual({ accountType: 'STUDENT', isLocked: true });
  });

  test('subscription/getStatus reports the caller’s subscription', async () => {
    let now = Date.parse('2026-06-01T12:00:00.000Z');
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], now: () => now });
    const [ann, bob] = ctx.users as [any, any];
    const free = await ctx.json('subscription/getStatus', {}, ann);
    expect(free.body).toEqual({ tier: 'FREE', isActive: false, expiresAt: null, productId: null, updatedAt: expect.any(String) });
    await ctx.store.write((tx) => updateUser(tx, bob.user.id, { subscriptionTier: 'PRO', subscriptionActive: true, subscriptionExpiresAt: Date.parse('2027-01-02T03:04:05.678Z'), subscriptionProductId: 'pro_monthly' }, Date.now()));
    const pro = await ctx.json('subscription/getStatus', {}, bob);
    expect(pro.body).toMatchObject({ tier: 'PRO', isActive: true, expiresAt: '2027-01-02T03:04:05.678Z', productId: 'pro_monthly' });
    expect((await ctx.json('subscription/getStatus', {}, ann)).body.tier).toBe('FREE');
    // Past its expiry a subscription is no longer active, whatever the flag says.
    now = Date.parse('2027-01-02T03:04:05.678Z');
    expect((await ctx.json('subscription/getStatus', {}, bob)).body).toMatchObject({ tier: 'PRO', isActive: false, expiresAt: '2027-01-02T03:04:05.678Z' });
  });
});
