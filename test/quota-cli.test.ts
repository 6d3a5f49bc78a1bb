/**
 * `parley tier` and `parley price` (docs/usage.md, "Quotas"): an admin's tiers and prices from the
 * command line, the same rows admin/getUsageQuotas answers with, and what the server then
 * enforces. The CLI from source on the context's database, on both stores.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestContext, onPg, type TestContext, type TestUser } from './helpers';
import { updateUser } from '../src/account/account.store';
import { startFakeOpenAI } from './fakes/openai';
import { v1Json } from './support/v1';

setDefaultTimeout(60_000);

const root = new URL('..', import.meta.url).pathname;
const openai = startFakeOpenAI();
afterAll(() => openai.stop());

async function setup() {
  const ctx = await createTestContext({
    users: [{ email: 'admin@example.org' }, { email: 'ann@example.org' }],
    config: { aiProvider: 'openai-chat', aiBaseUrl: openai.url, aiModel: 'small', rateLimitAi: undefined },
    durable: true,
  });
  const [admin, ann] = ctx.users as [TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann };
}

/** The CLI on the context's database: its data directory's file, or its PostgreSQL database. */
function cli(ctx: TestContext) {
  const where: Record<string, string> = onPg ? { PARLEY_DATABASE_URL: ctx.deps.config.databaseUrl! } : { PARLEY_DATA_DIR: dirname(ctx.db.$client.filename) };
  const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-quota-cli-')), ...where };
  return async (...args: string[]) => {
    const p = Bun.spawn([process.execPath, join(root, 'cli/main.ts'), ...args], { env, stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, out, err };
  };
}

describe('parley tier and parley price', () => {
  test('tier set, list and remove: the rows admin/getUsageQuotas answers with; bad values refused with a sentence', async () => {
    const { ctx, admin } = await setup();
    const parley = cli(ctx);
    expect((await parley('tier', 'list')).out).toBe('no tier limits anything\n');

    const set = await parley('tier', 'set', 'FREE', '--period', 'day', '--tokens', '10000', '--images', 'none', '--json');
    expect({ code: set.code, err: set.err }).toEqual({ code: 0, err: '' });
    const quotas = async () => (await ctx.json('admin/getUsageQuotas', {}, admin)).body;
    expect(JSON.parse(set.out)).toEqual((await quotas()).tiers[0]);
    expect((await quotas()).tiers).toEqual([{ name: 'FREE', period: 'day', tokens: 10000, researchRuns: null, images: null, updatedAt: expect.any(String) }]);
    const human = await parley('tier', 'set', 'PRO', '--period', 'month', '--tokens', '5000000', '--research-runs', '20');
    expect(human.out).toBe('set PRO: 5,000,000 tokens, 20 research runs, any number of images a month\n');

    const list = await parley('tier', 'list');
    expect(list.out.split('\n')[0]).toMatch(/^tier\s+period\s+tokens\s+research runs\s+images$/);
    expect(list.out).toMatch(/FREE\s+day\s+10,000\s+no limit\s+no limit/);
    expect(list.out).toMatch(/PRO\s+month\s+5,000,000\s+20\s+no limit/);
    expect(JSON.parse((await parley('tier', 'list', '--json')).out)).toEqual((await quotas()).tiers);

    for (const [args, says] of [
      [['--period', 'year'], "argument 'year' is invalid"],
      [['--period', 'day', '--tokens', '-5'], '--tokens must be a whole number of 0 or more, or none, got -5'],
      [['--tokens', '5'], "required option '--period <period>' not specified"],
    ] as [string[], string][]) {
      const bad = await parley('tier', 'set', 'FREE', ...args);
      expect(bad.code).not.toBe(0);
      expect(bad.err).toContain(says);
    }
    expect((await quotas()).tiers[0].tokens).toBe(10000);

    expect((await parley('tier', 'remove', 'PRO')).out).toBe("removed PRO's allowances: it limits nothing now\n");
    const again = await parley('tier', 'remove', 'PRO');
    expect({ code: again.code, err: again.err }).toEqual({ code: 2, err: 'parley: no tier PRO has allowances (parley tier list)\n' });
    expect((await quotas()).tiers.map((t: { name: string }) => t.name)).toEqual(['FREE']);
  });

  test('price set, list and remove, in credits to the millionth', async () => {
    const { ctx, admin } = await setup();
    const parley = cli(ctx);
    expect((await parley('price', 'list')).out).toBe('no model has a price\n');
    const set = await parley('price', 'set', 'env-ai/small', '--input', '0.5', '--output', '2', '--per-request', '0.000001', '--json');
    expect({ code: set.code, err: set.err }).toEqual({ code: 0, err: '' });
    const prices = async () => (await ctx.json('admin/getUsageQuotas', {}, admin)).body.prices;
    expect(await prices()).toEqual([{ model: 'env-ai/small', inputPerMillion: 0.5, outputPerMillion: 2, perUnit: 0, perRequest: 0.000001, updatedAt: expect.any(String) }]);
    expect(JSON.parse(set.out)).toEqual((await prices())[0]);
    expect((await parley('price', 'set', 'images/dall-e', '--per-unit', '40')).out).toBe('set images/dall-e: 0 in and 0 out per million tokens, 40 per unit, 0 per call\n');
    const list = await parley('price', 'list');
    expect(list.out).toMatch(/^model\s+input\/M\s+output\/M\s+per unit\s+per call\n/);
    expect(list.out).toMatch(/env-ai\/small\s+0\.5\s+2\s+0\s+0\.000001/);

    for (const value of ['1e3', '1000001']) {
      const bad = await parley('price', 'set', 'env-ai/small', '--input', value);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain(`--input must be credits from 0 to 1,000,000 (e.g. 0.5), got ${value}`);
    }
    expect((await parley('price', 'remove', 'images/dall-e', '--json')).out).toBe('{"removed":true,"model":"images/dall-e"}\n');
    expect((await parley('price', 'remove', 'images/dall-e')).err).toBe('parley: no price for images/dall-e (parley price list)\n');
    expect((await prices()).map((p: { model: string }) => p.model)).toEqual(['env-ai/small']);
  });

  test('what the CLI sets is what the server enforces: a tier of no tokens refuses a /v1 call with 429', async () => {
    const { ctx, ann } = await setup();
    const parley = cli(ctx);
    expect((await parley('tier', 'set', 'FREE', '--period', 'week', '--tokens', '0')).code).toBe(0);
    const refused = await v1Json(ctx, 'POST', '/v1/chat/completions', { model: 'env-ai/small', messages: [{ role: 'user', content: 'Hi' }] }, ann);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(refused.body.error.message).toContain('Your FREE allowance of 0 tokens a week is used up');
    expect(Number(refused.res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
