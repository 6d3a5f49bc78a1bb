import { describe, expect, test } from 'bun:test';
import { createTestContext, SPEC_ERRORS } from './helpers';
import { IMPORT_LIMITS } from '../src/chat/chat.routes';

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

  test('401 without a credential', async () => {
    const ctx = await setup();
    expect(await ctx.json('chat/importConversation', { title: 'x', messages: [{ role: 'user', content: 'x' }] })).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });
  });
});
