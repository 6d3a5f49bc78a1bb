import { describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createTestContext, SPEC_ERRORS, type TestContext, type TestUser } from './helpers';
import { IMPORT_LIMITS } from '../src/chat/chat.routes';
import { MESSAGE_ROW_BYTES } from '../src/chat/import.store';
import { createConversation } from '../src/chat/conversation.store';

const setup = () => createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });

describe('chat/importConversation', () => {
  test('a conversation with its messages in order, at their original times, owned by the caller and listed by its last message', async () => {
    const ctx = await setup();
    const [ann, bob] = ctx.users;
    const r = await ctx.json(
      'chat/importConversation',
      {
        title: 'Sourdough questions',
        messages: [
          { role: 'user', content: 'How long should it rise?', createdAt: '2024-03-01T10:00:00.000Z' },
          { role: 'assistant', content: 'About **4 hours** at 24 °C.', createdAt: '2024-03-01T10:00:05.000Z' },
          // Out of order: kept after the one before it.
          { role: 'user', content: 'And in the fridge?', createdAt: '2024-02-01T00:00:00.000Z' },
          { role: 'assistant', content: 'Overnight.' },
        ],
      },
      ann,
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ conversation: { title: 'Sourdough questions', ownerId: ann!.user.id, branchOf: null }, itemCount: 4 });
    const got = await ctx.json('chat/getConversation', { conversationId: r.body.conversation.id }, ann);
    expect(got.body.items.map((i: any) => [i.role, i.content, i.createdAt])).toEqual([
      ['user', 'How long should it rise?', '2024-03-01T10:00:00.000Z'],
      ['assistant', 'About **4 hours** at 24 °C.', '2024-03-01T10:00:05.000Z'],
      ['user', 'And in the fridge?', '2024-03-01T10:00:05.000Z'],
      ['assistant', 'Overnight.', '2024-03-01T10:00:05.000Z'],
    ]);
    expect(got.body.conversation.updatedAt).toBe('2024-03-01T10:00:05.000Z');
    // Older than a conversation started now: listed after it.
    await ctx.json('chat/importConversation', { title: 'Today', messages: [{ role: 'user', content: 'Hi' }] }, ann);
    const list = await ctx.json('chat/listConversations', {}, ann);
    expect(list.body.conversations.map((c: any) => c.title)).toEqual(['Today', 'Sourdough questions']);
    // Bob sees nothing of Ann's.
    expect(await ctx.json('chat/getConversation', { conversationId: r.body.conversation.id }, bob)).toMatchObject({ status: 403 });
  });

  test('bounded: no messages, an unknown role, too many messages, a future time', async () => {
    const ctx = await setup();
    const ann = ctx.users[0];
    expect(await ctx.json('chat/importConversation', { title: 'x', messages: [] }, ann)).toMatchObject({ status: 400 });
    expect(await ctx.json('chat/importConversation', { title: 'x', messages: [{ role: 'system', content: 'x' }] }, ann)).toMatchObject({ status: 400 });
    const many = Array.from({ length: IMPORT_LIMITS.messages + 1 }, () => ({ role: 'user', content: 'x' }));
    expect(await ctx.json('chat/importConversation', { title: 'x', messages: many }, ann)).toMatchObject({ status: 400 });
    const future = await ctx.json('chat/importConversation', { title: 'x', messages: [{ role: 'user', content: 'later', createdAt: '2999-01-01T00:00:00.000Z' }] }, ann);
    expect(Date.parse(future.body.conversation.updatedAt)).toBeLessThanOrEqual(Date.now());
  });

  describe('what imported conversations hold is capped per user (PARLEY_IMPORT_QUOTA_BYTES, PARLEY_IMPORTS_MAX_PER_USER)', () => {
    // Each counts its title, and each message's content in UTF-8 and its row: 1 + 1,000 + 256.
    const ONE = 1 + 1000 + MESSAGE_ROW_BYTES;
    const QUOTA = 4096;
    const conversation = (i: number) => ({ title: 'T', messages: [{ role: 'user', content: `${i}`.padEnd(1000, '.') }] });
    const held = async (ctx: TestContext, u: TestUser) =>
      (await ctx.query<{ n: number | string; bytes: number | string | null }>(sql`SELECT count(*) AS n, sum(imported_bytes) AS bytes FROM conversations WHERE owner_id = ${u.user.id} AND imported_bytes IS NOT NULL`)).map((r) => ({
        n: Number(r.n),
        bytes: Number(r.bytes ?? 0),
      }))[0]!;
    const items = async (ctx: TestContext) => ctx.count('conversation_items');

    test('the bytes they count together: past the quota a 409 naming it and saying how to make room, nothing imported; deleting one makes room', async () => {
      const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { importQuotaBytes: QUOTA } });
      const [ann, bob] = ctx.users as TestUser[];
      // A conversation of her own, not imported, counts nothing.
      await ctx.store.write((tx) => createConversation(tx, { ownerId: ann!.user.id, title: 'mine' }));
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await ctx.json('chat/importConversation', conversation(i), ann)).body.conversation.id);
      expect(await held(ctx, ann!)).toEqual({ n: 3, bytes: 3 * ONE });
      const before = await items(ctx);
      const refused = await ctx.json('chat/importConversation', conversation(3), ann);
      expect(refused).toMatchObject({ status: 409, body: { code: 'CONFLICT', data: { reason: 'cap', cap: 'PARLEY_IMPORT_QUOTA_BYTES', max: QUOTA } } });
      expect(refused.body.message).toBe(
        `Your imported conversations hold ${3 * ONE} bytes and this one has ${ONE}: the most this server allows is ${QUOTA} (PARLEY_IMPORT_QUOTA_BYTES). Delete imported conversations you no longer need first (chat/deleteConversation).`,
      );
      expect(await held(ctx, ann!)).toEqual({ n: 3, bytes: 3 * ONE });
      expect(await items(ctx)).toBe(before);
      // Bob's quota is his own.
      expect(await ctx.json('chat/importConversation', conversation(0), bob)).toMatchObject({ status: 200 });
      expect(await ctx.json('chat/deleteConversation', { conversationId: ids[0] }, ann)).toMatchObject({ status: 200 });
      expect(await ctx.json('chat/importConversation', conversation(3), ann)).toMatchObject({ status: 200 });
    });

    test('bytes are UTF-8 bytes, and an empty message costs its row', async () => {
      const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
      const ann = ctx.users[0] as TestUser;
      await ctx.json('chat/importConversation', { title: 'Crème', messages: [{ role: 'user', content: 'Ça va? 東京 😀' }, { role: 'assistant', content: '' }] }, ann);
      expect(await held(ctx, ann)).toEqual({ n: 1, bytes: 6 + 19 + 2 * MESSAGE_ROW_BYTES });
    });

    test('imports at once cannot pass either cap together', async () => {
      const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { importQuotaBytes: QUOTA, rateLimitWrite: undefined } });
      const ann = ctx.users[0] as TestUser;
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => ctx.json('chat/importConversation', conversation(i), ann)));
      expect(answers.map((a) => a.status).sort()).toEqual([...Array(3).fill(200), ...Array(9).fill(409)]);
      expect(await held(ctx, ann)).toEqual({ n: 3, bytes: 3 * ONE });

      const few = await createTestContext({ users: [{ email: 'ann@example.org' }], config: { importsMaxPerUser: 2, rateLimitWrite: undefined } });
      const bob = few.users[0] as TestUser;
      const counted = await Promise.all(Array.from({ length: 12 }, (_, i) => few.json('chat/importConversation', conversation(i), bob)));
      expect(counted.map((a) => a.status).sort()).toEqual([...Array(2).fill(200), ...Array(10).fill(409)]);
      expect(counted.find((a) => a.status === 409)!.body.data).toEqual({ reason: 'cap', cap: 'PARLEY_IMPORTS_MAX_PER_USER', max: 2 });
      expect(await held(few, bob)).toEqual({ n: 2, bytes: 2 * ONE });
    });
  });

  test('401 without a credential', async () => {
    const ctx = await setup();
    expect(await ctx.json('chat/importConversation', { title: 'x', messages: [{ role: 'user', content: 'x' }] })).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });
  });
});
