import { describe, expect, test } from 'bun:test';
import { createTestContext, failureOf } from './helpers';
import { addWriter, appendItem, branchConversation, canWriteConversation, createConversation, findConversationById, listItems, removeWriter, truncateFromItem } from '../src/chat/conversation.store';

describe('conversation store', () => {
  test('owner and writers can write; others cannot; unknown conversations cannot be written', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
    const [ann, bob] = ctx.users as [any, any];
    const c = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Plans' }));
    expect(await ctx.store.read((tx) => canWriteConversation(tx, c.id, ann.user.id))).toBe(true);
    expect(await ctx.store.read((tx) => canWriteConversation(tx, c.id, bob.user.id))).toBe(false);
    await ctx.store.read((tx) => addWriter(tx, c.id, bob.user.id));
    await ctx.store.read((tx) => addWriter(tx, c.id, bob.user.id)); // idempotent
    expect(await ctx.store.read((tx) => canWriteConversation(tx, c.id, bob.user.id))).toBe(true);
    await ctx.store.read((tx) => removeWriter(tx, c.id, bob.user.id));
    expect(await ctx.store.read((tx) => canWriteConversation(tx, c.id, bob.user.id))).toBe(false);
    expect(await ctx.store.read((tx) => canWriteConversation(tx, 'nope', ann.user.id))).toBe(false);
  });

  test('items keep their order', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const c = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id }));
    for (const content of ['one', 'two', 'three']) await ctx.store.read((tx) => appendItem(tx, { conversationId: c.id, role: 'user', content, authorId: ann.user.id }));
    expect((await ctx.store.read((tx) => listItems(tx, c.id))).map((i) => [i.position, i.content])).toEqual([[0, 'one'], [1, 'two'], [2, 'three']]);
    expect((await ctx.store.read((tx) => listItems(tx, c.id)))[0]!.parts).toEqual([]);
  });

  test('positions: an append after a truncation takes the first position removed; a branch goes on after the items it copied', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const c = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id }));
    const add = (conversationId: string, content: string) => ctx.store.read((tx) => appendItem(tx, { conversationId, role: 'user', content, authorId: ann.user.id }));
    const items = () => ctx.store.read((tx) => listItems(tx, c.id));
    for (const content of ['a', 'b', 'c', 'd']) await add(c.id, content);
    const third = (await items())[2]!;
    expect(await ctx.store.write((tx) => truncateFromItem(tx, third))).toBe(2);
    expect((await ctx.store.read((tx) => findConversationById(tx, c.id)))!.nextPosition).toBe(2);
    await add(c.id, 'e');
    expect((await ctx.store.read((tx) => listItems(tx, c.id))).map((i) => [i.position, i.content])).toEqual([[0, 'a'], [1, 'b'], [2, 'e']]);
    const [conversation, second] = [(await ctx.store.read((tx) => findConversationById(tx, c.id)))!, (await items())[1]!];
    const branch = await ctx.store.write((tx) => branchConversation(tx, conversation, second, ann.user.id));
    expect(branch.nextPosition).toBe(2);
    await add(branch.id, 'f');
    expect((await ctx.store.read((tx) => listItems(tx, branch.id))).map((i) => [i.position, i.content])).toEqual([[0, 'a'], [1, 'b'], [2, 'f']]);
    // Appending to a conversation that does not exist still fails on its foreign key.
    expect(await failureOf(add('no-such-conversation', 'x'))).toMatch(/FOREIGN KEY|foreign key/);
  });
});
