import { sql } from 'drizzle-orm';
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, SPEC_ERRORS, type TestContext, type TestUser } from './helpers';
import { addMemory, listMemories } from '../src/memory/memory.store';
import { MEMORY_MAX_CHARS } from '../src/memory/memory.rules';

// Generous: the suite shares small machines with other work.
setDefaultTimeout(30_000);

let clock = Date.parse('2026-03-01T10:00:00.000Z');

async function setup(max = 200): Promise<{ ctx: TestContext; ann: TestUser; bob: TestUser }> {
  // A clock that moves a second a call: `updatedAt` orders memories, so ties must not hide an order.
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { memoryMaxPerUser: max }, now: () => (clock += 1000) });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob };
}

const add = async (ctx: TestContext, as: TestUser, content: string) => (await ctx.json('memories/addMemory', { content }, as)).body;
const contents = async (ctx: TestContext, as: TestUser) => (await ctx.json('memories/listMemories', {}, as)).body.memories.map((m: any) => m.content);

describe('memories', () => {
  test('add, list (the most recently updated first), update, delete one, delete all', async () => {
    const { ctx, ann } = await setup();
    const first = await ctx.json('memories/addMemory', { content: '  Is vegetarian.  ' }, ann);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['content', 'createdAt', 'id', 'updatedAt']);
    expect(first.body.content).toBe('Is vegetarian.');
    expect(first.body.createdAt).toBe(first.body.updatedAt);
    await add(ctx, ann, 'Lives in Lyon.');
    await add(ctx, ann, 'Has a cat called Miso.');
    const list = await ctx.json('memories/listMemories', {}, ann);
    expect(list.status).toBe(200);
    expect(list.body.max).toBe(200);
    expect(list.body.memories.map((m: any) => m.content)).toEqual(['Has a cat called Miso.', 'Lives in Lyon.', 'Is vegetarian.']);

    const updated = await ctx.json('memories/updateMemory', { id: first.body.id, content: 'Is vegan.' }, ann);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: first.body.id, content: 'Is vegan.', createdAt: first.body.createdAt });
    expect(Date.parse(updated.body.updatedAt)).toBeGreaterThan(Date.parse(first.body.updatedAt));
    expect(await contents(ctx, ann)).toEqual(['Is vegan.', 'Has a cat called Miso.', 'Lives in Lyon.']);

    expect(await ctx.json('memories/deleteMemory', { id: first.body.id }, ann)).toMatchObject({ status: 200, body: { success: true } });
    expect(await contents(ctx, ann)).toEqual(['Has a cat called Miso.', 'Lives in Lyon.']);
    expect(await ctx.json('memories/deleteMemory', { id: first.body.id }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });

    expect(await ctx.json('memories/deleteAllMemories', {}, ann)).toMatchObject({ status: 200, body: { success: true, deletedCount: 2 } });
    expect(await contents(ctx, ann)).toEqual([]);
    expect(await ctx.json('memories/deleteAllMemories', {}, ann)).toMatchObject({ status: 200, body: { success: true, deletedCount: 0 } });
  });

  test("memories never cross users: another user's memory is 403, an unknown one 404, and lists and delete-all stay one's own", async () => {
    const { ctx, ann, bob } = await setup();
    const annsOwn = await add(ctx, ann, 'Ann likes tea.');
    await add(ctx, bob, 'Bob likes coffee.');
    expect(await contents(ctx, bob)).toEqual(['Bob likes coffee.']);

    expect(await ctx.json('memories/updateMemory', { id: annsOwn.id, content: 'Ann likes nothing.' }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('memories/deleteMemory', { id: annsOwn.id }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('memories/updateMemory', { id: 'nope', content: 'x' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect(await ctx.json('memories/deleteMemory', { id: 'nope' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });

    expect((await ctx.json('memories/deleteAllMemories', {}, bob)).body.deletedCount).toBe(1);
    expect(await contents(ctx, ann)).toEqual(['Ann likes tea.']);
  });

  test('refusals: 401 without a credential, 400 for blank, too long or missing input', async () => {
    const { ctx, ann } = await setup();
    for (const [path, body] of [
      ['memories/listMemories', {}],
      ['memories/addMemory', { content: 'x' }],
      ['memories/updateMemory', { id: 'x', content: 'x' }],
      ['memories/deleteMemory', { id: 'x' }],
      ['memories/deleteAllMemories', {}],
    ] as const)
      expect(await ctx.json(path, body)).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });

    for (const content of ['', '   \n', 'x'.repeat(MEMORY_MAX_CHARS + 1)]) {
      const res = await ctx.json('memories/addMemory', { content }, ann);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
      expect(res.body.data.issues.map((i: any) => i.path)).toContainEqual(['content']);
    }
    expect((await ctx.json('memories/addMemory', { content: 'x'.repeat(MEMORY_MAX_CHARS) }, ann)).status).toBe(200);
    const kept = (await ctx.json('memories/listMemories', {}, ann)).body.memories[0];
    expect((await ctx.json('memories/updateMemory', { id: kept.id, content: ' ' }, ann)).status).toBe(400);
    expect((await ctx.json('memories/updateMemory', { id: kept.id }, ann)).status).toBe(400);
    expect((await ctx.json('memories/deleteMemory', {}, ann)).status).toBe(400);
    expect(await ctx.count('memories')).toBe(1);
  });

  test('the per-user cap (PARLEY_MEMORY_MAX_PER_USER): one more is 409 with a message saying so; another user is not affected', async () => {
    const { ctx, ann, bob } = await setup(2);
    await add(ctx, ann, 'one');
    await add(ctx, ann, 'two');
    const third = await ctx.json('memories/addMemory', { content: 'three' }, ann);
    expect(third.status).toBe(409);
    expect(third.body).toMatchObject({ code: 'CONFLICT', status: 409, defined: false });
    expect(third.body.message).toContain('PARLEY_MEMORY_MAX_PER_USER');
    expect((await ctx.json('memories/listMemories', {}, ann)).body.max).toBe(2);
    expect((await ctx.json('memories/addMemory', { content: 'bob one' }, bob)).status).toBe(200);
    // Editing stays possible at the cap, and deleting makes room again.
    const [newest] = (await ctx.json('memories/listMemories', {}, ann)).body.memories;
    expect((await ctx.json('memories/updateMemory', { id: newest.id, content: 'two, edited' }, ann)).status).toBe(200);
    await ctx.json('memories/deleteMemory', { id: newest.id }, ann);
    expect((await ctx.json('memories/addMemory', { content: 'three' }, ann)).status).toBe(200);
  });

  test('the cap holds when additions race', async () => {
    const { ctx, ann } = await setup(3);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ctx.json('memories/addMemory', { content: `fact ${i}` }, ann)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 409, 409, 409, 409, 409]);
    expect(await ctx.count('memories')).toBe(3);
  });

  test('a tool call saved again (a restart) finds the memory it saved, not a second one', async () => {
    const { ctx, ann } = await setup();
    const input = { userId: ann.user.id, content: 'Likes jazz.', origin: 'resp_1:round 0:0:call_1', max: 200 };
    const a = await ctx.store.write((tx) => addMemory(tx, input, Date.now()));
    const b = await ctx.store.write((tx) => addMemory(tx, input, Date.now()));
    expect(a.ok && b.ok && a.memory.id === b.memory.id).toBe(true);
    expect(await ctx.store.read((tx) => listMemories(tx, ann.user.id))).toHaveLength(1);
  });

  test('memories go with the account: deleting the user removes them (cascade), and only theirs', async () => {
    const { ctx, ann, bob } = await setup();
    await add(ctx, ann, 'Ann fact');
    await add(ctx, bob, 'Bob fact');
    await ctx.query(sql`DELETE FROM users WHERE id = ${ann.user.id}`);
    expect((await ctx.query<{ content: string }>(sql`SELECT content FROM memories`)).map((r) => r.content)).toEqual(['Bob fact']);
  });
});
